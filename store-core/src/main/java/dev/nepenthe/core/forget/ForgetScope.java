package dev.nepenthe.core.forget;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.VectorRecord;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;

/**
 * What a forget request names, within its tenant: a subject, record ids, a source (one version or
 * every version of it) or a metadata filter. Records whose {@code derivedFrom} meets the scope are
 * reached through provenance, not through the scope itself.
 *
 * <p>What a scope costs to mark: a subject scope reads the subject's bitmap; every other kind tests
 * each record of the tenant, in every collection.
 */
public sealed interface ForgetScope {

    /**
     * Short name of the kind of scope, used in evidence ("subject", "records", "source",
     * "metadata").
     *
     * @return the kind's name
     */
    String kind();

    /**
     * True if the record (already known to be in the request's tenant) is named by this scope.
     *
     * @param record a record of the request's tenant
     * @return whether the scope names it
     */
    boolean matches(VectorRecord record);

    /**
     * Every record of one subject in the tenant.
     *
     * @param subject the subject, not blank
     * @return the scope
     * @throws IllegalArgumentException if the subject is blank
     * @throws NullPointerException if the subject is null
     */
    static ForgetScope subject(String subject) {
        return new Subject(subject);
    }

    /**
     * These records of the tenant, by id.
     *
     * @param ids at least one id
     * @return the scope
     * @throws IllegalArgumentException if there is no id or an id is null (an id given twice counts
     *     once)
     */
    static ForgetScope records(String... ids) {
        Set<String> unique = new LinkedHashSet<>();
        for (String id : ids) {
            if (id == null) {
                throw new IllegalArgumentException(
                        "forget scope records: expected record ids, got a null among them");
            }
            unique.add(id);
        }
        return new Records(unique);
    }

    /**
     * These records of the tenant, by id.
     *
     * @param ids at least one id (copied)
     * @return the scope
     * @throws IllegalArgumentException if the set is empty
     * @throws NullPointerException if the set or an id is null
     */
    static ForgetScope records(Set<String> ids) {
        return new Records(ids);
    }

    /**
     * Every version of a source.
     *
     * @param kind the source's kind
     * @param id the source's id
     * @return the scope
     * @throws NullPointerException if the kind or id is null
     */
    static ForgetScope source(String kind, String id) {
        return new Source(kind, id, null);
    }

    /**
     * One version of a source; other versions stay.
     *
     * @param kind the source's kind
     * @param id the source's id
     * @param version the version to forget, 0 or more
     * @return the scope
     * @throws IllegalArgumentException if the version is negative
     * @throws NullPointerException if the kind or id is null
     */
    static ForgetScope source(String kind, String id, long version) {
        return new Source(kind, id, version);
    }

    /**
     * The records of the tenant whose metadata the filter accepts when the forget is marked (see
     * {@link Metadata}).
     *
     * @param filter the filter
     * @return the scope
     * @throws NullPointerException if the filter is null
     */
    static ForgetScope metadata(Filter filter) {
        return new Metadata(filter);
    }

    /**
     * Every record of one subject in the tenant.
     *
     * @param subject the subject
     */
    record Subject(String subject) implements ForgetScope {
        /**
         * Checks the subject.
         *
         * @throws IllegalArgumentException if the subject is blank
         * @throws NullPointerException if the subject is null
         */
        public Subject {
            Objects.requireNonNull(subject, "forget scope subject");
            if (subject.isBlank()) {
                throw new IllegalArgumentException(
                        "forget scope subject: expected a non-blank subject, got a blank one");
            }
        }

        @Override
        public String kind() {
            return "subject";
        }

        @Override
        public boolean matches(VectorRecord r) {
            return subject.equals(r.subject());
        }
    }

    /**
     * Records of the tenant by id.
     *
     * @param ids the ids (an immutable copy)
     */
    record Records(Set<String> ids) implements ForgetScope {
        /**
         * Copies the ids.
         *
         * @throws IllegalArgumentException if there is none
         * @throws NullPointerException if the set or an id is null
         */
        public Records {
            ids = Set.copyOf(ids);
            if (ids.isEmpty()) {
                throw new IllegalArgumentException(
                        "forget scope records: expected at least one record id, got none");
            }
        }

        @Override
        public String kind() {
            return "records";
        }

        @Override
        public boolean matches(VectorRecord r) {
            return ids.contains(r.id());
        }
    }

    /**
     * Records whose {@link VectorRecord#source()} is this source, in one version or every version.
     *
     * @param sourceKind the source's kind
     * @param sourceId the source's id
     * @param version null for every version
     */
    record Source(String sourceKind, String sourceId, Long version) implements ForgetScope {
        /**
         * Checks the source.
         *
         * @throws IllegalArgumentException if the version is negative
         * @throws NullPointerException if the kind or id is null
         */
        public Source {
            Objects.requireNonNull(sourceKind, "forget scope source kind");
            Objects.requireNonNull(sourceId, "forget scope source id");
            if (version != null && version < 0) {
                throw new IllegalArgumentException(
                        "forget scope source version: expected >= 0, got " + version);
            }
        }

        @Override
        public String kind() {
            return "source";
        }

        @Override
        public boolean matches(VectorRecord r) {
            return r.source() != null
                    && r.source().kind().equals(sourceKind)
                    && r.source().id().equals(sourceId)
                    && (version == null || r.source().version() == version);
        }
    }

    /**
     * Records whose metadata the filter accepts at the moment of the mark. A filter is resolved to
     * the records it matches then; later writes it matches are refused while the operation runs,
     * and afterwards only the resolved record ids stay fenced.
     *
     * @param filter the filter
     */
    record Metadata(Filter filter) implements ForgetScope {
        /**
         * Checks the filter.
         *
         * @throws NullPointerException if the filter is null
         */
        public Metadata {
            Objects.requireNonNull(filter, "forget scope filter");
        }

        @Override
        public String kind() {
            return "metadata";
        }

        @Override
        public boolean matches(VectorRecord r) {
            return filter.test(r.metadata());
        }
    }
}

package dev.nepenthe.core.forget;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.VectorRecord;
import java.util.Objects;
import java.util.Set;

/**
 * What a forget request names, within its tenant: a subject, record ids, a source (one version
 * or every version of it) or a metadata filter. Records whose {@code derivedFrom} meets the
 * scope are reached through provenance, not through the scope itself.
 */
public sealed interface ForgetScope {

    /** Short name of the kind of scope, used in evidence ("subject", "records", "source", "metadata"). */
    String kind();

    /** True if the record (already known to be in the request's tenant) is named by this scope. */
    boolean matches(VectorRecord record);

    static ForgetScope subject(String subject) {
        return new Subject(subject);
    }

    static ForgetScope records(String... ids) {
        return new Records(Set.of(ids));
    }

    static ForgetScope records(Set<String> ids) {
        return new Records(ids);
    }

    /** Every version of a source. */
    static ForgetScope source(String kind, String id) {
        return new Source(kind, id, null);
    }

    /** One version of a source; other versions stay. */
    static ForgetScope source(String kind, String id, long version) {
        return new Source(kind, id, version);
    }

    static ForgetScope metadata(Filter filter) {
        return new Metadata(filter);
    }

    record Subject(String subject) implements ForgetScope {
        public Subject {
            Objects.requireNonNull(subject, "forget scope subject");
            if (subject.isBlank()) {
                throw new IllegalArgumentException("forget scope subject: expected a non-blank subject, got a blank one");
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

    record Records(Set<String> ids) implements ForgetScope {
        public Records {
            ids = Set.copyOf(ids);
            if (ids.isEmpty()) {
                throw new IllegalArgumentException("forget scope records: expected at least one record id, got none");
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

    /** @param version null for every version */
    record Source(String sourceKind, String sourceId, Long version) implements ForgetScope {
        public Source {
            Objects.requireNonNull(sourceKind, "forget scope source kind");
            Objects.requireNonNull(sourceId, "forget scope source id");
            if (version != null && version < 0) {
                throw new IllegalArgumentException("forget scope source version: expected >= 0, got " + version);
            }
        }

        @Override
        public String kind() {
            return "source";
        }

        @Override
        public boolean matches(VectorRecord r) {
            return r.source() != null && r.source().kind().equals(sourceKind) && r.source().id().equals(sourceId)
                    && (version == null || r.source().version() == version);
        }
    }

    /**
     * Records whose metadata the filter accepts at the moment of the mark. A filter is resolved
     * to the records it matches then; later writes it matches are refused while the operation
     * runs, and afterwards only the resolved record ids stay fenced.
     */
    record Metadata(Filter filter) implements ForgetScope {
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

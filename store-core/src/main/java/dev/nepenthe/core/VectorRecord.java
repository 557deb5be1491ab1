package dev.nepenthe.core;

import dev.nepenthe.core.internal.engine.DerivedFromRef;
import dev.nepenthe.core.internal.record.RecordAccess;
import java.nio.charset.StandardCharsets;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * One stored item: an id unique within its tenant, the subject (the person an erasure request
 * names; null for records about nobody), an optional source reference, the vector, optional text,
 * metadata, and the records it was derived from (a summary names its sources, so forgetting a
 * source can reach the summary): ids in the same collection, or {@code "@<collection>/<id>"} in
 * another collection of the tenant.
 *
 * <p>Metadata values are {@link String}, {@link Long}, {@link Double} or {@link Boolean}; the
 * builder widens {@code Integer}, {@code Short} and {@code Float}. Immutable: the vector is copied
 * in and out, and the text is kept as UTF-8 bytes and decoded on each {@link #text()}.
 *
 * <p>A store keeps a copy of its own of every record it is given and hands out copies (get,
 * search), so that it can wipe its copy in place (zeros) instead of leaving it in the heap for the
 * collector: the vector goes off the heap into the collection's vector column, whose row is zeroed
 * when the record is deleted or forgotten, and the text is wiped when a forget seals. The records
 * callers hold are never changed. Ids, subject, source and metadata are Java strings, which cannot
 * be wiped; nothing in the store references them after the seal, so the next collection reclaims
 * them.
 */
public final class VectorRecord {

    /** Tenant used when a record or request names none. */
    public static final String DEFAULT_TENANT = "default";

    private final String id;
    private final String tenant;
    private final String subject;
    private final SourceRef source;
    private final float[] vector;
    private final byte[] text;
    private volatile boolean wiped;
    private final Map<String, Object> metadata;
    private final List<String> derivedFrom;

    static {
        RecordAccess.install(
                new RecordAccess.Internals() {
                    @Override
                    public float[] vectorUnsafe(VectorRecord r) {
                        return r.vector;
                    }

                    @Override
                    public int textUtf8Length(VectorRecord r) {
                        return r.textUtf8Length();
                    }

                    @Override
                    public VectorRecord copy(VectorRecord r) {
                        return r.copy();
                    }

                    @Override
                    public void wipe(VectorRecord r) {
                        r.wipe();
                    }

                    @Override
                    public VectorRecord stored(
                            VectorRecord r, String tenant, String subject, float[] vector) {
                        return new VectorRecord(r, tenant, subject, vector);
                    }

                    @Override
                    public VectorRecord joined(VectorRecord r, float[] vector, byte[] textUtf8) {
                        return new VectorRecord(r, vector, textUtf8);
                    }

                    @Override
                    public VectorRecord joined(
                            VectorRecord r,
                            float[] vector,
                            byte[] textUtf8,
                            Map<String, Object> metadata) {
                        return new VectorRecord(r, vector, textUtf8, metadata);
                    }

                    @Override
                    public VectorRecord catalogued(VectorRecord r, String tenant, String subject) {
                        VectorRecord c = new VectorRecord(r, tenant, subject, null);
                        return new VectorRecord(
                                c, null, null, r.metadata.isEmpty() ? Map.of() : WITHHELD);
                    }

                    @Override
                    public byte[] textUnsafe(VectorRecord r) {
                        return r.wiped ? null : r.text;
                    }

                    @Override
                    public VectorRecord decoded(RecordAccess.Decoded d) {
                        return new VectorRecord(d);
                    }
                });
    }

    /**
     * The metadata of a record the store keeps without it (its sealed copy holds it): any read
     * fails, so code that forgot to read the copy fails loudly rather than seeing no metadata.
     */
    private static final Map<String, Object> WITHHELD =
            new AbstractMap<>() {
                @Override
                public Set<Map.Entry<String, Object>> entrySet() {
                    throw new IllegalStateException(
                            "this record's metadata is read from its stored copy, not kept with"
                                    + " it");
                }
            };

    private VectorRecord(Builder b) {
        this.id = b.id;
        this.tenant = b.tenant;
        this.subject = b.subject;
        this.source = b.source;
        this.vector = b.vector == null ? null : b.vector.clone();
        this.text = b.text == null ? null : b.text.getBytes(StandardCharsets.UTF_8);
        // Most records carry no metadata: they share one empty map instead of a map and its views
        // each.
        this.metadata =
                b.metadata.isEmpty()
                        ? Map.of()
                        : Collections.unmodifiableMap(new LinkedHashMap<>(b.metadata));
        this.derivedFrom = List.copyOf(b.derivedFrom);
    }

    /**
     * Starts a record in the {@link #DEFAULT_TENANT}, with no subject, source, text, metadata or
     * provenance.
     *
     * @param id the record's id, unique within its tenant; checked (not blank, at most 512 UTF-8
     *     bytes) when the record is stored
     * @return a builder
     * @throws NullPointerException if the id is null
     */
    public static Builder builder(String id) {
        return new Builder(id);
    }

    /**
     * A builder holding a copy of this record's fields, to change some of them.
     *
     * @return a new builder; building it without changes gives an equal record
     */
    public Builder toBuilder() {
        Builder b =
                new Builder(id)
                        .tenant(tenant)
                        .subject(subject)
                        .source(source)
                        .vector(vector)
                        .text(text());
        b.metadata.putAll(metadata);
        b.derivedFrom.addAll(derivedFrom);
        return b;
    }

    /**
     * The id, unique within the record's tenant.
     *
     * @return the id
     */
    public String id() {
        return id;
    }

    /**
     * The tenant, the isolation boundary: no operation in one tenant reads or changes another.
     *
     * @return the tenant, {@link #DEFAULT_TENANT} unless the builder named one
     */
    public String tenant() {
        return tenant;
    }

    /**
     * The subject: the person an erasure request names.
     *
     * @return the subject, or null for a record about nobody in particular
     */
    public String subject() {
        return subject;
    }

    /**
     * Where the record came from.
     *
     * @return the source reference, or null when none was given
     */
    public SourceRef source() {
        return source;
    }

    /**
     * A copy of the vector; O(dimension) per call.
     *
     * @return a new array, or null for a record built without a vector (the store refuses to keep
     *     one)
     */
    public float[] vector() {
        return vector == null ? null : vector.clone();
    }

    /**
     * The text, decoded from the stored UTF-8 on each call.
     *
     * @return the text, or null when there is none or the store's copy was wiped
     */
    public String text() {
        return text == null || wiped ? null : new String(text, StandardCharsets.UTF_8);
    }

    /**
     * A copy whose vector and text are arrays of its own (strings and the metadata map, which are
     * immutable, are shared): what the store keeps and what it hands out.
     */
    private VectorRecord copy() {
        return new VectorRecord(this);
    }

    private VectorRecord(VectorRecord r) {
        this.id = r.id;
        this.tenant = r.tenant;
        this.subject = r.subject;
        this.source = r.source;
        this.vector = r.vector == null ? null : r.vector.clone();
        this.text = r.text == null || r.wiped ? null : r.text.clone();
        this.metadata = r.metadata;
        this.derivedFrom = r.derivedFrom;
    }

    /** A record read back from storage: adopts its arrays (the reader made them for it). */
    private VectorRecord(RecordAccess.Decoded d) {
        this.id = Objects.requireNonNull(d.id());
        this.tenant = Objects.requireNonNull(d.tenant());
        this.subject = d.subject();
        this.source = d.source();
        this.vector = d.vector();
        this.text = d.textUtf8();
        this.metadata =
                d.metadata().isEmpty() ? Map.of() : Collections.unmodifiableMap(d.metadata());
        this.derivedFrom = List.copyOf(d.derivedFrom());
    }

    /**
     * The same record with {@code vector} in place of its own, adopted, not copied (null for none),
     * and the given tenant and subject (equal strings: the store's shared instances); the text's
     * bytes are shared, so wiping either record wipes the text of both.
     */
    private VectorRecord(VectorRecord r, String tenant, String subject, float[] vector) {
        if (!r.tenant.equals(tenant) || !Objects.equals(r.subject, subject)) {
            throw new IllegalArgumentException("expected the record's own tenant and subject");
        }
        this.id = r.id;
        this.tenant = tenant;
        this.subject = subject;
        this.source = r.source;
        this.vector = vector;
        this.text = r.text;
        this.wiped = r.wiped;
        this.metadata = r.metadata;
        this.derivedFrom = r.derivedFrom;
    }

    /**
     * {@code r}'s id, tenant, subject, source, metadata and sources with {@code vector} and {@code
     * textUtf8} (each adopted, not copied; null for none) in place of its arrays.
     */
    private VectorRecord(VectorRecord r, float[] vector, byte[] textUtf8) {
        this(r, vector, textUtf8, r.metadata);
    }

    /**
     * {@link #VectorRecord(VectorRecord, float[], byte[])} with {@code metadata} (adopted) in place
     * of its own.
     */
    private VectorRecord(
            VectorRecord r, float[] vector, byte[] textUtf8, Map<String, Object> metadata) {
        this.id = r.id;
        this.tenant = r.tenant;
        this.subject = r.subject;
        this.source = r.source;
        this.vector = vector;
        this.text = textUtf8;
        this.metadata = metadata;
        this.derivedFrom = r.derivedFrom;
    }

    private int textUtf8Length() {
        return text == null ? 0 : text.length;
    }

    /**
     * Wipes the vector and text in place (zeros): the store calls it on its copy of a forgotten
     * record once the forget has sealed.
     */
    private void wipe() {
        wiped = true;
        if (vector != null) {
            Arrays.fill(vector, 0f);
        }
        if (text != null) {
            Arrays.fill(text, (byte) 0);
        }
    }

    /**
     * The metadata, in the order it was added.
     *
     * @return an unmodifiable map of strings to {@code String}, {@code Long}, {@code Double} or
     *     {@code Boolean} values
     */
    public Map<String, Object> metadata() {
        return metadata;
    }

    /**
     * The ids (in the same tenant) of the records this one was made from: a forget that reaches one
     * of them reaches this record through provenance.
     *
     * @return an unmodifiable list, empty when the record derives from nothing
     */
    public List<String> derivedFrom() {
        return derivedFrom;
    }

    /**
     * Equal when every field is: id, tenant, subject, source, vector (element by element), text,
     * metadata and {@code derivedFrom}.
     *
     * @param o the object to compare with
     * @return whether {@code o} is a record with the same content
     */
    @Override
    public boolean equals(Object o) {
        return o instanceof VectorRecord r
                && id.equals(r.id)
                && tenant.equals(r.tenant)
                && Objects.equals(subject, r.subject)
                && Objects.equals(source, r.source)
                && Arrays.equals(vector, r.vector)
                && Objects.equals(text(), r.text())
                && metadata.equals(r.metadata)
                && derivedFrom.equals(r.derivedFrom);
    }

    /**
     * A hash of the id, tenant, subject and vector.
     *
     * @return the hash code
     */
    @Override
    public int hashCode() {
        return Objects.hash(id, tenant, subject, Arrays.hashCode(vector));
    }

    /**
     * Deliberately content-free: record contents must not reach logs or exception messages.
     *
     * @return the dimension, the number of metadata keys, whether there is text and the number of
     *     sources, and nothing else
     */
    // WITHHELD is a sentinel whose equals would throw (it reads entries): identity is the test.
    @SuppressWarnings("ReferenceEquality")
    @Override
    public String toString() {
        return "VectorRecord[dimension="
                + (vector == null ? 0 : vector.length)
                + ", metadataKeys="
                + (metadata == WITHHELD ? "stored" : metadata.size())
                + ", hasText="
                + (text != null && !wiped)
                + ", derivedFrom="
                + derivedFrom.size()
                + "]";
    }

    /**
     * Builds a record; validation against a collection happens when it is stored. Not safe for
     * concurrent use.
     */
    public static final class Builder {
        private final String id;
        private String tenant = DEFAULT_TENANT;
        private String subject;
        private SourceRef source;
        private float[] vector;
        private String text;
        private final Map<String, Object> metadata = new LinkedHashMap<>();
        private final List<String> derivedFrom = new ArrayList<>();

        private Builder(String id) {
            this.id = Objects.requireNonNull(id, "record id must not be null");
        }

        /**
         * Sets the tenant (at most 128 UTF-8 bytes, checked when stored).
         *
         * @param tenant the tenant
         * @return this builder
         * @throws NullPointerException if the tenant is null (omit the call for the default tenant)
         */
        public Builder tenant(String tenant) {
            this.tenant =
                    Objects.requireNonNull(
                            tenant, "tenant must not be null (omit it for the default tenant)");
            return this;
        }

        /**
         * Sets the subject, the person the record is about; a forget of that subject reaches it,
         * and its data is sealed under that subject's own key.
         *
         * @param subject the subject (at most 512 UTF-8 bytes, checked when stored), or null for
         *     none
         * @return this builder
         */
        public Builder subject(String subject) {
            this.subject = subject;
            return this;
        }

        /**
         * Sets the source reference.
         *
         * @param source where the record came from, or null for none
         * @return this builder
         */
        public Builder source(SourceRef source) {
            this.source = source;
            return this;
        }

        /**
         * Sets the source reference.
         *
         * @param kind what sort of source it is
         * @param id the source's id
         * @param version the source's version
         * @return this builder
         * @throws IllegalArgumentException if the kind or id is blank or the version negative
         */
        public Builder source(String kind, String id, long version) {
            return source(new SourceRef(kind, id, version));
        }

        /**
         * Sets the vector (copied). Its dimension and values are checked when the record is stored.
         *
         * @param vector the vector
         * @return this builder
         */
        public Builder vector(float[] vector) {
            this.vector = vector == null ? null : vector.clone();
            return this;
        }

        /**
         * Sets the text (at most 1 MiB of UTF-8, checked when stored).
         *
         * @param text the text, or null for none
         * @return this builder
         */
        public Builder text(String text) {
            this.text = text;
            return this;
        }

        /**
         * Adds a metadata entry.
         *
         * @param key the key (1 to 128 characters, checked when stored); an existing entry is
         *     replaced
         * @param value a {@code String}, {@code Long}, {@code Double} or {@code Boolean}; {@code
         *     Integer}, {@code Short} and {@code Byte} are widened to {@code Long}, {@code Float}
         *     to {@code Double}
         * @return this builder
         * @throws IllegalArgumentException if the value is null or not a string, integral number,
         *     floating-point number or boolean
         * @throws NullPointerException if the key is null
         */
        public Builder metadata(String key, Object value) {
            Objects.requireNonNull(key, "metadata key must not be null");
            metadata.put(key, normalizeValue(key, value));
            return this;
        }

        /**
         * Adds every entry of a map, as {@link #metadata(String, Object)} does one by one.
         *
         * @param entries the entries
         * @return this builder
         * @throws IllegalArgumentException if a value is null or of another type (the entries
         *     before it are kept)
         */
        public Builder metadata(Map<String, ?> entries) {
            entries.forEach(this::metadata);
            return this;
        }

        /**
         * Adds the records this one was made from, in the record's tenant: a plain id names a
         * record of the same collection, {@code "@<collection>/<id>"} one in another collection
         * (see {@link #derivedFromRecordIn}). Forgetting a source reaches this record, across
         * collections too. An entry starting with '@' that is not such a reference, or that names a
         * tenant ({@code "@<tenant>:<collection>/<id>"}), is refused when the record is stored.
         *
         * @param ids the source records' ids or references
         * @return this builder
         * @throws NullPointerException if an id is null
         */
        public Builder derivedFrom(String... ids) {
            return derivedFrom(Arrays.asList(ids));
        }

        /**
         * Adds the records this one was made from, as {@link #derivedFrom(String...)} does.
         *
         * @param ids the source records' ids or references
         * @return this builder
         * @throws NullPointerException if an id is null (the ids before it are kept)
         */
        public Builder derivedFrom(List<String> ids) {
            for (String s : ids) {
                derivedFrom.add(Objects.requireNonNull(s, "derivedFrom ids must not be null"));
            }
            return this;
        }

        /**
         * Adds a source in another collection of the record's tenant: the entry {@code
         * "@<collection>/<id>"}. A forget of the source removes this record too (or holds it for
         * regeneration, as this record's collection's provenance policy says).
         *
         * @param collection the source's collection: 1 to 64 letters, digits, '_' or '-' (it need
         *     not exist yet; a reference is followed once it does)
         * @param id the source's id in that collection, not blank
         * @return this builder
         * @throws IllegalArgumentException if the collection name or the id is malformed
         * @throws NullPointerException if either is null
         */
        public Builder derivedFromRecordIn(String collection, String id) {
            Objects.requireNonNull(collection, "derivedFrom collection");
            Objects.requireNonNull(id, "derivedFrom id");
            String ref = DerivedFromRef.spell(collection, id);
            DerivedFromRef.checkReference(ref, "derivedFrom");
            derivedFrom.add(ref);
            return this;
        }

        /**
         * Builds the record; the builder may be used again.
         *
         * @return a new, immutable record
         */
        public VectorRecord build() {
            return new VectorRecord(this);
        }
    }

    static Object normalizeValue(String key, Object value) {
        if (value instanceof String
                || value instanceof Long
                || value instanceof Double
                || value instanceof Boolean) {
            return value;
        }
        if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return ((Number) value).longValue();
        }
        if (value instanceof Float f) {
            return f.doubleValue();
        }
        throw new IllegalArgumentException(
                "metadata '"
                        + key
                        + "': expected a String, integral number, "
                        + "floating-point number or Boolean, got "
                        + (value == null ? "null" : value.getClass().getName()));
    }
}

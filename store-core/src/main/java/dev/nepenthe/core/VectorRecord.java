package dev.nepenthe.core;

import dev.nepenthe.core.internal.engine.RecordAccess;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One stored item: an id unique within its tenant, the subject (the person an erasure request
 * names; null for records about nobody), an optional source reference, the vector, optional
 * text, metadata, and the ids of the records it was derived from (a summary names its sources,
 * so forgetting a source can reach the summary).
 *
 * <p>Metadata values are {@link String}, {@link Long}, {@link Double} or {@link Boolean};
 * the builder widens {@code Integer}, {@code Short} and {@code Float}. Immutable: the vector is
 * copied in and out, and the text is kept as UTF-8 bytes and decoded on each {@link #text()}.
 *
 * <p>A store keeps a copy of its own of every record it is given and hands out copies (get,
 * search), so that when a forget seals it can wipe its copy's vector and text in place (zeros)
 * instead of leaving them in the heap for the collector; the records callers hold are never
 * changed. Ids, subject, source and metadata are Java strings, which cannot be wiped; nothing in
 * the store references them after the seal, so the next collection reclaims them.
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
        RecordAccess.install(new RecordAccess.Internals() {
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
        });
    }

    private VectorRecord(Builder b) {
        this.id = b.id;
        this.tenant = b.tenant;
        this.subject = b.subject;
        this.source = b.source;
        this.vector = b.vector == null ? null : b.vector.clone();
        this.text = b.text == null ? null : b.text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        this.metadata = Collections.unmodifiableMap(new LinkedHashMap<>(b.metadata));
        this.derivedFrom = List.copyOf(b.derivedFrom);
    }

    public static Builder builder(String id) {
        return new Builder(id);
    }

    /** A builder holding a copy of this record's fields, to change some of them. */
    public Builder toBuilder() {
        Builder b = new Builder(id).tenant(tenant).subject(subject).source(source).vector(vector).text(text());
        b.metadata.putAll(metadata);
        b.derivedFrom.addAll(derivedFrom);
        return b;
    }

    public String id() {
        return id;
    }

    public String tenant() {
        return tenant;
    }

    /** The subject, or null for a record about nobody in particular. */
    public String subject() {
        return subject;
    }

    public SourceRef source() {
        return source;
    }

    /** A copy of the vector. */
    public float[] vector() {
        return vector == null ? null : vector.clone();
    }

    /** The text (decoded from the stored UTF-8 on each call), or null when there is none or it was wiped. */
    public String text() {
        return text == null || wiped ? null : new String(text, java.nio.charset.StandardCharsets.UTF_8);
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

    /** Length of the text in UTF-8 bytes, 0 when there is none. */
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

    public Map<String, Object> metadata() {
        return metadata;
    }

    public List<String> derivedFrom() {
        return derivedFrom;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof VectorRecord r && id.equals(r.id) && tenant.equals(r.tenant)
                && Objects.equals(subject, r.subject) && Objects.equals(source, r.source)
                && Arrays.equals(vector, r.vector) && Objects.equals(text(), r.text())
                && metadata.equals(r.metadata) && derivedFrom.equals(r.derivedFrom);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, tenant, subject, Arrays.hashCode(vector));
    }

    /** Deliberately content-free: record contents must not reach logs or exception messages. */
    @Override
    public String toString() {
        return "VectorRecord[dimension=" + (vector == null ? 0 : vector.length) + ", metadataKeys=" + metadata.size()
                + ", hasText=" + (text != null && !wiped) + ", derivedFrom=" + derivedFrom.size() + "]";
    }

    /** Builds a record; validation against a collection happens when it is stored. */
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

        public Builder tenant(String tenant) {
            this.tenant = Objects.requireNonNull(tenant, "tenant must not be null (omit it for the default tenant)");
            return this;
        }

        public Builder subject(String subject) {
            this.subject = subject;
            return this;
        }

        public Builder source(SourceRef source) {
            this.source = source;
            return this;
        }

        public Builder source(String kind, String id, long version) {
            return source(new SourceRef(kind, id, version));
        }

        public Builder vector(float[] vector) {
            this.vector = vector == null ? null : vector.clone();
            return this;
        }

        public Builder text(String text) {
            this.text = text;
            return this;
        }

        /**
         * Adds a metadata entry.
         *
         * @throws IllegalArgumentException if the value is not a string, integral number,
         *     floating-point number or boolean
         */
        public Builder metadata(String key, Object value) {
            Objects.requireNonNull(key, "metadata key must not be null");
            metadata.put(key, normalizeValue(key, value));
            return this;
        }

        public Builder metadata(Map<String, ?> entries) {
            entries.forEach(this::metadata);
            return this;
        }

        public Builder derivedFrom(String... ids) {
            return derivedFrom(Arrays.asList(ids));
        }

        public Builder derivedFrom(List<String> ids) {
            for (String s : ids) {
                derivedFrom.add(Objects.requireNonNull(s, "derivedFrom ids must not be null"));
            }
            return this;
        }

        public VectorRecord build() {
            return new VectorRecord(this);
        }
    }

    static Object normalizeValue(String key, Object value) {
        if (value instanceof String || value instanceof Long || value instanceof Double || value instanceof Boolean) {
            return value;
        }
        if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return ((Number) value).longValue();
        }
        if (value instanceof Float f) {
            return f.doubleValue();
        }
        throw new IllegalArgumentException("metadata '" + key + "': expected a String, integral number, "
                + "floating-point number or Boolean, got " + (value == null ? "null" : value.getClass().getName()));
    }
}

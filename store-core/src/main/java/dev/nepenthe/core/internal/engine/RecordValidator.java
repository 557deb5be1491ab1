package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.io.Utf8;
import dev.nepenthe.core.internal.record.RecordAccess;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Checks records and queries against a collection before anything is stored, so a batch with one
 * bad record stores none of it. Messages say what was expected and what arrived, and name a record
 * by its position in the batch, never by its content (ids may carry personal data).
 */
final class RecordValidator {
    static final int MAX_ID_BYTES = 512;
    static final int MAX_TENANT_BYTES = 128;
    static final int MAX_SUBJECT_BYTES = 512;
    static final int MAX_TEXT_BYTES = 1 << 20;
    static final int MAX_METADATA_ENTRIES = 256;
    static final int MAX_METADATA_KEY_CHARS = 128;
    static final int MAX_METADATA_STRING_BYTES = 1 << 16;
    static final int MAX_BATCH = 100_000;

    /**
     * Largest squared norm a new vector or a query may have. Every score the store computes between
     * two vectors is bounded by their norms: a dot product by |a||b|, a squared L2 distance by (|a|
     * + |b|)^2, at most 4 max(|a|^2, |b|^2). An eighth of the largest float keeps each of them, and
     * the float sums that compute them, finite with room to spare; a vector of finite but huge
     * components (3e38) would otherwise score infinity against everything.
     */
    static final double MAX_SQUARED_NORM = Float.MAX_VALUE / 8.0;

    private final CollectionSpec spec;

    RecordValidator(CollectionSpec spec) {
        this.spec = spec;
    }

    void validateBatch(List<VectorRecord> batch) {
        if (batch.size() > MAX_BATCH) {
            throw new IllegalArgumentException(
                    "batch: expected at most " + MAX_BATCH + " records, got " + batch.size());
        }
        Map<List<String>, Integer> seen = new HashMap<>();
        for (int i = 0; i < batch.size(); i++) {
            VectorRecord r = batch.get(i);
            if (r == null) {
                throw new IllegalArgumentException("record " + i + " of the batch is null");
            }
            validate(r, "record " + i + " of the batch");
            // New records only: a store written before this bound still opens (validate).
            checkMagnitude(RecordAccess.vectorUnsafe(r), "record " + i + " of the batch");
            for (int j = 0; j < r.derivedFrom().size(); j++) {
                // Here and not in validate: a stored record may hold an entry from before
                // references.
                DerivedFromRef.check(
                        r.derivedFrom().get(j),
                        "derivedFrom[" + j + "]",
                        "record " + i + " of the batch");
            }
            Integer first = seen.putIfAbsent(List.of(r.tenant(), r.id()), i);
            if (first != null) {
                throw new IllegalArgumentException(
                        "records "
                                + first
                                + " and "
                                + i
                                + " of the batch have the same tenant and id: expected unique ids"
                                + " in one batch");
            }
        }
    }

    void validate(VectorRecord r, String where) {
        checkString(r.id(), "id", MAX_ID_BYTES, where);
        checkString(r.tenant(), "tenant", MAX_TENANT_BYTES, where);
        if (r.subject() != null) {
            checkString(r.subject(), "subject", MAX_SUBJECT_BYTES, where);
        }
        float[] v = RecordAccess.vectorUnsafe(r);
        if (v == null) {
            throw new IllegalArgumentException(
                    where + ": expected a vector of dimension " + spec.dimension() + ", got none");
        }
        checkComponents(v, where);
        if (RecordAccess.textUtf8Length(r) > MAX_TEXT_BYTES) {
            throw new IllegalArgumentException(
                    where
                            + ": text expected at most "
                            + MAX_TEXT_BYTES
                            + " UTF-8 bytes, got "
                            + RecordAccess.textUtf8Length(r));
        }
        if (r.metadata().size() > MAX_METADATA_ENTRIES) {
            throw new IllegalArgumentException(
                    where
                            + ": expected at most "
                            + MAX_METADATA_ENTRIES
                            + " metadata entries, got "
                            + r.metadata().size());
        }
        for (Map.Entry<String, Object> e : r.metadata().entrySet()) {
            String key = e.getKey();
            if (key.isEmpty() || key.length() > MAX_METADATA_KEY_CHARS) {
                throw new IllegalArgumentException(
                        where
                                + ": metadata keys expected 1 to "
                                + MAX_METADATA_KEY_CHARS
                                + " characters, got "
                                + key.length());
            }
            if (e.getValue() instanceof String s && Utf8.length(s) > MAX_METADATA_STRING_BYTES) {
                throw new IllegalArgumentException(
                        where
                                + ": metadata '"
                                + key
                                + "' expected at most "
                                + MAX_METADATA_STRING_BYTES
                                + " UTF-8 bytes, got "
                                + Utf8.length(s));
            }
            if (e.getValue() instanceof Double d && !Double.isFinite(d)) {
                throw new IllegalArgumentException(
                        where + ": metadata '" + key + "' expected a finite number, got " + d);
            }
        }
        for (int i = 0; i < r.derivedFrom().size(); i++) {
            String d = r.derivedFrom().get(i);
            boolean reference = !d.isEmpty() && d.charAt(0) == DerivedFromRef.MARK;
            checkString(
                    d,
                    "derivedFrom[" + i + "]",
                    MAX_ID_BYTES + (reference ? DerivedFromRef.MAX_PREFIX_BYTES : 0),
                    where);
        }
    }

    /** A query's vector: as a stored one's, and a norm within {@link #MAX_SQUARED_NORM}. */
    void checkVector(float[] v, String where) {
        checkComponents(v, where);
        checkMagnitude(v, where);
    }

    /**
     * A squared norm (summed in double, so it is exact enough and never overflows) within the
     * bound.
     */
    static void checkMagnitude(float[] v, String where) {
        double sum = 0;
        for (float x : v) {
            sum += (double) x * x;
        }
        if (!(sum <= MAX_SQUARED_NORM)) {
            throw new IllegalArgumentException(
                    where
                            + ": expected a vector whose squared norm is at most "
                            + String.format(Locale.ROOT, "%.3e", MAX_SQUARED_NORM)
                            + " (so that its scores against"
                            + " other vectors stay finite), got "
                            + String.format(Locale.ROOT, "%.3e", sum));
        }
    }

    /** Length, finiteness, and (for cosine) non-zero norm. */
    private void checkComponents(float[] v, String where) {
        if (v.length != spec.dimension()) {
            throw new IllegalArgumentException(
                    where
                            + ": expected a vector of dimension "
                            + spec.dimension()
                            + " for collection '"
                            + spec.name()
                            + "', got dimension "
                            + v.length);
        }
        boolean allZero = true;
        for (int i = 0; i < v.length; i++) {
            if (!Float.isFinite(v[i])) {
                throw new IllegalArgumentException(
                        where
                                + ": expected finite vector components, got "
                                + v[i]
                                + " at index "
                                + i);
            }
            allZero &= v[i] == 0f;
        }
        if (allZero && spec.metric() == Metric.COSINE) {
            throw new IllegalArgumentException(
                    where + ": cosine metric expected a non-zero vector, got all zeros");
        }
    }

    private static void checkString(String s, String field, int maxBytes, String where) {
        if (s == null || s.isBlank()) {
            throw new IllegalArgumentException(
                    where
                            + ": "
                            + field
                            + " expected a non-blank string, got "
                            + (s == null ? "null" : "a blank one"));
        }
        int n = Utf8.length(s);
        if (n > maxBytes) {
            throw new IllegalArgumentException(
                    where
                            + ": "
                            + field
                            + " expected at most "
                            + maxBytes
                            + " UTF-8 bytes, got "
                            + n);
        }
    }
}

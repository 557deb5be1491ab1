package dev.nepenthe.core.internal.record;

import dev.nepenthe.core.SourceRef;
import dev.nepenthe.core.VectorRecord;
import java.util.List;
import java.util.Map;

/**
 * The store's way into a {@link VectorRecord}'s own arrays, which the public API keeps to itself
 * (it copies them in and out). The engine, the forget engine and the storage code read the vector
 * without a copy on hot paths, copy a record when it enters or leaves the store, and wipe the
 * store's copy once a forget seals; those classes live in internal packages, so a public method on
 * {@code VectorRecord} would have handed the same power to every user. The record class installs
 * its accessor when it is initialised, as the JDK's own shared-secrets pattern does.
 */
public final class RecordAccess {

    /** What {@link VectorRecord} lets the store do to it. */
    public interface Internals {
        float[] vectorUnsafe(VectorRecord r);

        int textUtf8Length(VectorRecord r);

        VectorRecord copy(VectorRecord r);

        void wipe(VectorRecord r);

        VectorRecord stored(VectorRecord r, String tenant, String subject, float[] vector);

        VectorRecord joined(VectorRecord r, float[] vector, byte[] textUtf8);

        byte[] textUnsafe(VectorRecord r);

        VectorRecord joined(
                VectorRecord r, float[] vector, byte[] textUtf8, Map<String, Object> metadata);

        VectorRecord catalogued(VectorRecord r, String tenant, String subject);

        VectorRecord decoded(Decoded d);
    }

    /**
     * A record's parts as the storage decodes them, for {@link #decoded}: the arrays are the
     * decoder's own, and the metadata map holds only the types a record allows.
     */
    // A carrier from the decoder to the record's constructor, never compared or kept.
    @SuppressWarnings("ArrayRecordComponent")
    public record Decoded(
            String id,
            String tenant,
            String subject,
            SourceRef source,
            float[] vector,
            byte[] textUtf8,
            Map<String, Object> metadata,
            List<String> derivedFrom) {}

    private static volatile Internals internals;

    private RecordAccess() {}

    /** Called once by {@link VectorRecord}'s static initialiser; a second call is refused. */
    public static synchronized void install(Internals i) {
        if (internals != null) {
            throw new IllegalStateException("record internals are installed once, by VectorRecord");
        }
        internals = i;
    }

    private static Internals get() {
        Internals i = internals;
        if (i == null) {
            // The accessor is installed by VectorRecord's initialiser; run it if nothing has yet.
            try {
                Class.forName(
                        VectorRecord.class.getName(), true, VectorRecord.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            i = internals;
        }
        return i;
    }

    /** The record's vector without copying: callers promise not to modify it. */
    public static float[] vectorUnsafe(VectorRecord r) {
        return get().vectorUnsafe(r);
    }

    /** The record's vector dimension, 0 when it has none. */
    public static int dimension(VectorRecord r) {
        float[] v = get().vectorUnsafe(r);
        return v == null ? 0 : v.length;
    }

    /** Length of the record's text in UTF-8 bytes, 0 when there is none. */
    public static int textUtf8Length(VectorRecord r) {
        return get().textUtf8Length(r);
    }

    /** A copy with arrays of its own: what the store keeps and what it hands out. */
    public static VectorRecord copy(VectorRecord r) {
        return get().copy(r);
    }

    /**
     * The same record holding {@code vector} (adopted, not copied; null for none) and sharing the
     * text's bytes: the catalogue keeps its records without their vectors and joins them again when
     * one is read.
     */
    public static VectorRecord withVector(VectorRecord r, float[] vector) {
        return get().stored(r, r.tenant(), r.subject(), vector);
    }

    /**
     * {@link #withVector} with the record's tenant and subject replaced by equal strings: the
     * catalogue's own instances, so a million records of one tenant hold one tenant string.
     */
    public static VectorRecord withVector(
            VectorRecord r, String tenant, String subject, float[] vector) {
        return get().stored(r, tenant, subject, vector);
    }

    /**
     * The record's other fields with {@code vector} and {@code textUtf8} (UTF-8 bytes), both
     * adopted, not copied (null for none): the catalogue keeps records without either and joins
     * them again when one is read.
     */
    public static VectorRecord joined(VectorRecord r, float[] vector, byte[] textUtf8) {
        return get().joined(r, vector, textUtf8);
    }

    /**
     * {@link #joined(VectorRecord, float[], byte[])} with {@code metadata} (adopted, not copied: an
     * unmodifiable map of the types a record allows) in place of the record's own.
     */
    public static VectorRecord joined(
            VectorRecord r, float[] vector, byte[] textUtf8, Map<String, Object> metadata) {
        return get().joined(r, vector, textUtf8, metadata);
    }

    /**
     * What the catalogue keeps of a record: no vector, no text, and its metadata withheld (a read
     * of it fails; the sealed copy holds it), with the given tenant and subject (equal strings: the
     * catalogue's shared instances).
     */
    public static VectorRecord catalogued(VectorRecord r, String tenant, String subject) {
        return get().catalogued(r, tenant, subject);
    }

    /**
     * The record's text as UTF-8 bytes without copying (null when none or wiped): callers change it
     * only in a record of their own.
     */
    public static byte[] textUnsafe(VectorRecord r) {
        return get().textUnsafe(r);
    }

    /**
     * A record as the storage decodes it, adopting the arrays it is given (the vector, the text's
     * UTF-8 bytes and the metadata map, which must hold only the types a record allows): the public
     * builder's defensive copies were most of what an open allocated.
     */
    public static VectorRecord decoded(Decoded d) {
        return get().decoded(d);
    }

    /** Zeros the record's vector and text in place (the store's own copy, after a seal). */
    public static void wipe(VectorRecord r) {
        get().wipe(r);
    }
}

package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.crypto.DataKey;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.RecordCipher;
import dev.nepenthe.core.internal.record.RecordAccess;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Objects;
import javax.crypto.AEADBadTagException;

/**
 * Decrypts and decodes stored copies: one at a time for a get, and in bulk for an open, ahead of
 * their admission. It touches no state of the storage, so an open opens segments in parallel; a
 * failure at open is kept, not thrown, because a copy the tombstone journal deletes or a newer
 * version supersedes is dropped without being read (its key may be gone), exactly as when each copy
 * was opened at its admission.
 */
final class StoredCopyOpener {

    /** Why a stored copy could not be opened; it matters only if the copy is admitted. */
    enum OpenFailure {
        NO_KEY,
        DOES_NOT_DECRYPT,
        HASHES_DIFFER,
        READ_FAILED,
        REFUSED_BY_SINK
    }

    /**
     * A stored copy opened ahead of its admission: its header (the sealed bytes dropped), and the
     * record or why there is none; {@code segment} and {@code offset} say where it lies (segment 0
     * for a copy from the log).
     */
    record Opened(
            SealedRecord stored,
            VectorRecord record,
            OpenFailure failure,
            Exception cause,
            int segment,
            long offset) {
        Opened(SealedRecord stored, VectorRecord record, OpenFailure failure, Exception cause) {
            this(stored, record, failure, cause, 0, 0);
        }

        /** This copy, read at {@code offset} of the segment file {@code segment}. */
        Opened at(int segment, long offset) {
            return new Opened(stored, record, failure, cause, segment, offset);
        }

        /**
         * Throws why this copy, found admissible in {@code where}, could not be opened, if it could
         * not.
         */
        void throwIfFailed(Path where) throws IOException {
            if (failure == null) {
                return;
            }
            switch (failure) {
                case NO_KEY ->
                        throw new CorruptFileException(
                                where,
                                "a record is sealed under a key the keystore does not hold and no"
                                        + " deletion names it (was the store opened with another"
                                        + " keystore folder?)");
                case DOES_NOT_DECRYPT ->
                        throw new CorruptFileException(
                                where,
                                "a record does not decrypt: its bytes, its header or its key"
                                        + " were changed (wrong master key?)",
                                cause);
                case HASHES_DIFFER ->
                        throw new CorruptFileException(
                                where,
                                "a record decrypts but its tenant, subject or id do not match"
                                        + " the hashes stored with it");
                case READ_FAILED -> throw (IOException) cause;
                case REFUSED_BY_SINK -> throw (RuntimeException) cause;
            }
        }
    }

    /**
     * What one segment's records are decrypted and decoded into, one after the other, instead of
     * two arrays per record (at a large open those arrays were a good part of what it allocated;
     * see docs/BENCHMARKS.md). Zeroed after each record. One per segment and thread.
     */
    static final class OpenBuffers {
        byte[] plain = SealedRecord.NO_BYTES;

        /**
         * Sized by the first record that goes to a sink; reused while the vectors have its length.
         */
        float[] vector;
    }

    /**
     * The subject hash last computed while one segment is opened: a segment keeps each subject's
     * records together, and each hash is an HMAC. One per segment and thread.
     */
    final class LastSubject {
        private String tenant;
        private String subject;
        private KeyedHash.Hash hash;

        KeyedHash.Hash hash(String t, String s) {
            if (hash == null || !t.equals(tenant) || !Objects.equals(s, subject)) {
                hash = ctx.scopeHash(collectionId, t, s);
                tenant = t;
                subject = s;
            }
            return hash;
        }
    }

    private final StoreContext ctx;
    private final String collectionId;
    private final KeyedHash.Hash collectionHash;

    StoredCopyOpener(StoreContext ctx, String collectionId, KeyedHash.Hash collectionHash) {
        this.ctx = ctx;
        this.collectionId = collectionId;
        this.collectionHash = collectionHash;
    }

    /** See {@link CollectionStorage#readStored}: the copy {@code found} of {@code ordinal}. */
    VectorRecord read(StoredCopies.Found found, int ordinal) throws IOException {
        SealedRecord copy = found.copy();
        DataKey key = ctx.keystore().find(copy.subject());
        if (key == null) {
            return null;
        }
        byte[] plain = new byte[copy.sealed().length];
        try {
            int length =
                    ctx.sealer()
                            .openInto(
                                    key,
                                    RecordCipher.aad(copy.subject(), copy.record(), copy.seq()),
                                    copy.sealed(),
                                    copy.sealed().length,
                                    plain);
            return RecordCodec.read(plain, length, null);
        } catch (AEADBadTagException e) {
            throw new CorruptFileException(
                    found.where(),
                    "the stored copy of ordinal "
                            + ordinal
                            + " (version "
                            + copy.seq()
                            + ") does not decrypt: its bytes, its header or its key were changed",
                    e);
        } finally {
            Arrays.fill(plain, (byte) 0);
        }
    }

    /**
     * Opens one stored copy at open. A copy the journal does not delete goes to {@code sink} (when
     * given), which may take its vector.
     */
    Opened open(
            SealedRecord r,
            CollectionStorage.LoadSink sink,
            LastSubject subjects,
            OpenBuffers buffers) {
        SealedRecord header =
                new SealedRecord(
                        r.ordinal(), r.seq(), r.subject(), r.record(), SealedRecord.NO_BYTES);
        return open(header, r.sealed(), r.sealed().length, sink, subjects, buffers);
    }

    /**
     * As above, for a copy whose header is {@code r} (its own sealed bytes empty) and whose sealed
     * bytes are the first {@code sealedLength} of {@code sealed}.
     */
    Opened open(
            SealedRecord r,
            byte[] sealed,
            int sealedLength,
            CollectionStorage.LoadSink sink,
            LastSubject subjects,
            OpenBuffers buffers) {
        try {
            DataKey key = ctx.keystore().find(r.subject());
            if (key == null) {
                return new Opened(r, null, OpenFailure.NO_KEY, null);
            }
            VectorRecord rec;
            if (buffers.plain.length < sealedLength) {
                buffers.plain = new byte[Math.max(sealedLength, 2 * buffers.plain.length)];
            }
            try {
                int length =
                        ctx.sealer()
                                .openInto(
                                        key,
                                        RecordCipher.aad(r.subject(), r.record(), r.seq()),
                                        sealed,
                                        sealedLength,
                                        buffers.plain);
                rec = RecordCodec.read(buffers.plain, length, sink == null ? null : buffers.vector);
            } catch (AEADBadTagException e) {
                return new Opened(r, null, OpenFailure.DOES_NOT_DECRYPT, e);
            } finally {
                Arrays.fill(buffers.plain, 0, sealedLength, (byte) 0);
            }
            float[] decoded = RecordAccess.vectorUnsafe(rec);
            if (sink != null && buffers.vector == null && decoded != null) {
                buffers.vector = new float[decoded.length];
            }
            try {
                if (!ctx.hashes().record(rec.tenant(), rec.id()).equals(r.record())
                        || !subjects.hash(rec.tenant(), rec.subject()).equals(r.subject())) {
                    return new Opened(r, null, OpenFailure.HASHES_DIFFER, null);
                }
                if (sink != null
                        && !ctx.journal()
                                .isDeleted(collectionHash, r.record(), r.subject(), r.seq())) {
                    try {
                        rec = sink.opened(r.ordinal(), r.seq(), rec);
                    } catch (RuntimeException e) {
                        return new Opened(r, null, OpenFailure.REFUSED_BY_SINK, e);
                    }
                }
                float[] held = RecordAccess.vectorUnsafe(rec);
                if (held != null && isScratch(held, buffers)) {
                    // The sink left the vector in the record (or was not asked): it needs one of
                    // its own.
                    rec = RecordAccess.withVector(rec, held.clone());
                }
                return new Opened(r, rec, null, null);
            } finally {
                if (buffers.vector != null) {
                    Arrays.fill(buffers.vector, 0f);
                }
            }
        } catch (IOException e) {
            // The keystore could not unwrap the key, or the plaintext does not decode: thrown as
            // it is if this copy is admitted.
            return new Opened(r, null, OpenFailure.READ_FAILED, e);
        }
    }

    // Identity, not contents: is this the segment's scratch vector itself?
    @SuppressWarnings("ReferenceEquality")
    private static boolean isScratch(float[] vector, OpenBuffers buffers) {
        return vector == buffers.vector;
    }
}

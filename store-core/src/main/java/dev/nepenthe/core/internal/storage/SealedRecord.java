package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.internal.crypto.KeyedHash;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/**
 * A record as it rests on disk: encrypted under its subject's key, with only keyed hashes, its
 * ordinal and its version (a collection-wide sequence number) in the clear.
 *
 * @param ordinal the record's ordinal in the collection's indexes
 * @param seq the version: the sequence number of the write that stored it
 * @param subject keyed hash of (collection, tenant, subject): which key decrypts it
 * @param record keyed hash of (tenant, id)
 * @param sealed AES-GCM of the record's bytes, bound to (subject, record, seq)
 */
// Compared only to find the very same copy again (StoredCopies.withdrawPending): the sealed bytes'
// identity is what that wants, not their contents.
@SuppressWarnings("ArrayRecordComponent")
public record SealedRecord(
        int ordinal, long seq, KeyedHash.Hash subject, KeyedHash.Hash record, byte[] sealed) {

    static final int MAX_SEALED = 64 << 20;

    /** The sealed bytes of a header: a copy whose ciphertext lies elsewhere, or was dropped. */
    static final byte[] NO_BYTES = new byte[0];

    void write(DataOutput out) throws IOException {
        out.writeInt(ordinal);
        out.writeLong(seq);
        out.write(subject.bytes());
        out.write(record.bytes());
        out.writeInt(sealed.length);
        out.write(sealed);
    }

    static SealedRecord read(DataInput in) throws IOException {
        int ordinal = in.readInt();
        long seq = in.readLong();
        KeyedHash.Hash subject = readHash(in);
        KeyedHash.Hash record = readHash(in);
        byte[] sealed = new byte[readLength(in, ordinal)];
        in.readFully(sealed);
        return new SealedRecord(ordinal, seq, subject, record, sealed);
    }

    static KeyedHash.Hash readHash(DataInput in) throws IOException {
        byte[] h = new byte[KeyedHash.LENGTH];
        in.readFully(h);
        return new KeyedHash.Hash(h);
    }

    /**
     * The sealed bytes' length, which follows the hashes, checked with the ordinal read before it.
     */
    static int readLength(DataInput in, int ordinal) throws IOException {
        int len = in.readInt();
        if (ordinal < 0 || len < 0 || len > MAX_SEALED) {
            throw new IOException(
                    "sealed record with ordinal "
                            + ordinal
                            + " and length "
                            + len
                            + " is impossible");
        }
        return len;
    }
}

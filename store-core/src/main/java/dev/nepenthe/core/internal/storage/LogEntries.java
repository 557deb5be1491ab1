package dev.nepenthe.core.internal.storage;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The entries a collection's storage writes into its write-ahead log, in one place for the writer
 * and the two readers (the open's replay and the purge of a dropped collection):
 *
 * <ul>
 *   <li>a put: {@link #PUT}, then the {@link SealedRecord} as it writes itself;
 *   <li>a delete: {@link #DELETE}, the ordinal (int) and the deletion's version (long).
 * </ul>
 */
final class LogEntries {
    static final byte PUT = 1, DELETE = 2;

    private LogEntries() {}

    static byte[] put(SealedRecord s) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(s.sealed().length + 96);
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeByte(PUT);
        s.write(out);
        return bytes.toByteArray();
    }

    static byte[] delete(int ordinal, long seq) {
        return ByteBuffer.allocate(13).put(DELETE).putInt(ordinal).putLong(seq).array();
    }

    /** The sealed record of a {@link #PUT} entry. */
    static SealedRecord readPut(byte[] payload) throws IOException {
        return SealedRecord.read(
                new DataInputStream(new ByteArrayInputStream(payload, 1, payload.length - 1)));
    }
}

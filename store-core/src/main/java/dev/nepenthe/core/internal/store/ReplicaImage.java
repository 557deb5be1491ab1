package dev.nepenthe.core.internal.store;

import java.io.FilterInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The stream format of a replica copy, shared by its writer and its reader, with the rules a
 * relative path in it must keep. Apart so that what is written and what is accepted cannot drift.
 *
 * <p>Big-endian, as {@link java.io.DataOutputStream} writes it:
 *
 * <ul>
 *   <li>header: magic {@code "NPRC"} (int), the format name (unsigned short length, UTF-8), the
 *       version (int);
 *   <li>a folder frame: {@code 'D'}, the root tag (byte: 1 the data folder, 2 the keystore folder),
 *       the relative path (unsigned short length, UTF-8, {@code /} between names);
 *   <li>a file frame: {@code 'F'}, the root tag, the relative path, the length (long), the bytes,
 *       their CRC32C (int);
 *   <li>the end frame: {@code 'E'}, the number of file frames (int), the total of their lengths
 *       (long), and the SHA-256 of every byte of the stream before it (32 bytes).
 * </ul>
 *
 * A reader stops after the end frame's digest: what follows belongs to whoever called it.
 */
final class ReplicaImage {

    static final int MAGIC = 0x4E505243; // "NPRC"
    static final String FORMAT = "nepenthe-replica-copy";
    static final int VERSION = 1;

    static final byte FOLDER = 'D';
    static final byte FILE = 'F';
    static final byte END = 'E';

    static final byte ROOT_DATA = 1;
    static final byte ROOT_KEYS = 2;

    /** Longest relative path accepted, in UTF-8 bytes (an unsigned short carries its length). */
    static final int MAX_PATH_BYTES = 4096;

    static final int DIGEST_BYTES = 32;

    private ReplicaImage() {}

    /** How a root tag reads in messages. */
    static String rootName(byte tag) {
        return switch (tag) {
            case ROOT_DATA -> "data";
            case ROOT_KEYS -> "keys";
            default -> "unknown root " + (tag & 0xFF);
        };
    }

    /** How a frame type reads in messages. */
    static String frameName(int type) {
        return switch (type) {
            case FOLDER -> "a folder frame ('D')";
            case FILE -> "a file frame ('F')";
            case END -> "the end frame ('E')";
            case -1 -> "the end of the stream";
            default -> String.format("byte 0x%02x", type & 0xFF);
        };
    }

    /**
     * Checks a relative path as it travels: not empty, not absolute, no backslash or NUL, no empty,
     * {@code .} or {@code ..} name, at most {@value #MAX_PATH_BYTES} bytes.
     *
     * @return null if it is sound, else what is wrong with it
     */
    static String pathProblem(String path) {
        if (path.isEmpty()) {
            return "an empty path";
        }
        if (path.getBytes(StandardCharsets.UTF_8).length > MAX_PATH_BYTES) {
            return "a path longer than " + MAX_PATH_BYTES + " bytes";
        }
        if (path.startsWith("/")) {
            return "an absolute path";
        }
        if (path.indexOf('\\') >= 0 || path.indexOf('\0') >= 0) {
            return "a path with a backslash or a NUL";
        }
        for (String name : path.split("/", -1)) {
            if (name.isEmpty()) {
                return "a path with an empty name";
            }
            if (name.equals(".") || name.equals("..")) {
                return "a path with a '" + name + "' name";
            }
        }
        return null;
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable in this JVM", e);
        }
    }

    /** Passes bytes on and digests them. */
    static final class DigestingOutput extends FilterOutputStream {
        final MessageDigest digest = sha256();

        DigestingOutput(OutputStream out) {
            super(out);
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            digest.update((byte) b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            digest.update(b, off, len);
        }

        /** Flushes the caller's stream only when asked; never closes it. */
        @Override
        public void close() {}
    }

    /**
     * Reads exactly what is asked (no read-ahead, so nothing past the end frame is consumed),
     * digesting it and counting its bytes for messages.
     */
    static final class DigestingInput extends FilterInputStream {
        final MessageDigest digest = sha256();
        long position;

        DigestingInput(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = in.read();
            if (b >= 0) {
                digest.update((byte) b);
                position++;
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = in.read(b, off, len);
            if (n > 0) {
                digest.update(b, off, n);
                position += n;
            }
            return n;
        }

        @Override
        public long skip(long n) {
            return 0; // every byte is digested: nothing is skipped unread
        }

        @Override
        public int available() {
            return 0;
        }

        @Override
        public boolean markSupported() {
            return false;
        }

        /** The caller's stream stays open. */
        @Override
        public void close() {}
    }
}

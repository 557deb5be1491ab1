package dev.nepenthe.core.internal.io;

import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.Arrays;

/**
 * What an index body needs beyond {@link DataOutputStream}: a format header for bodies written into
 * a stream the index does not own (the store's encrypted index generations, see {@link
 * dev.nepenthe.core.index.VectorIndex#writeTo}), and floats in bulk. Floats are big-endian, as
 * {@link DataOutputStream#writeFloat} writes them, so a file's bytes do not depend on which of the
 * two wrote it (a NaN keeps its payload here, where writeFloat canonicalises it; stored vectors
 * hold no NaN); in bulk they cost one array copy instead of a method call per float (a 1M x 384
 * index has 384M of them). The chunk buffer is zeroed after every float call: what passes through
 * it is record data, which must not linger in memory.
 */
public final class BodyStreams {

    /** Floats converted per chunk: 64 KiB of bytes. */
    private static final int CHUNK = 1 << 14;

    /** A chunk's bytes with float and int views made once (views cost more than a short copy). */
    private static final class Chunk {
        final byte[] bytes;
        final FloatBuffer floats;
        final IntBuffer ints;

        private Chunk() {
            this.bytes = new byte[4 * CHUNK];
            ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.BIG_ENDIAN);
            this.floats = b.asFloatBuffer();
            this.ints = b.asIntBuffer();
        }

        static Chunk create() {
            return new Chunk();
        }
    }

    private static final ThreadLocal<Chunk> BUFFER = ThreadLocal.withInitial(Chunk::create);

    private BodyStreams() {}

    /** Writes the format name and version that {@link #readHeader} checks. */
    public static void writeHeader(DataOutputStream out, String format, int version)
            throws IOException {
        out.writeUTF(format);
        out.writeInt(version);
    }

    /**
     * Reads a header written by {@link #writeHeader} and returns its version.
     *
     * @throws IllegalArgumentException if the format is another or the version is outside {@code
     *     [minVersion, maxVersion]}, saying what was expected and what was found (the caller names
     *     the file)
     */
    public static int readHeader(DataInputStream in, String format, int minVersion, int maxVersion)
            throws IOException {
        String actual = in.readUTF();
        if (!actual.equals(format)) {
            throw new IllegalArgumentException(
                    "expected a '" + format + "' body, got a '" + actual + "' body");
        }
        int version = in.readInt();
        if (version < minVersion || version > maxVersion) {
            throw new IllegalArgumentException(
                    format
                            + ": version "
                            + version
                            + ", this build reads versions "
                            + minVersion
                            + " to "
                            + maxVersion);
        }
        return version;
    }

    /** Writes {@code a[off, off + len)} big-endian. */
    public static void writeFloats(DataOutput out, float[] a, int off, int len) throws IOException {
        Chunk c = BUFFER.get();
        for (int done = 0; done < len; ) {
            int n = Math.min(CHUNK, len - done);
            c.floats.put(0, a, off + done, n);
            out.write(c.bytes, 0, 4 * n);
            done += n;
        }
        Arrays.fill(c.bytes, 0, 4 * Math.min(CHUNK, len), (byte) 0);
    }

    /**
     * Writes {@code a[off, off + len)} big-endian, as {@link DataOutputStream#writeInt} would one
     * by one.
     */
    public static void writeInts(DataOutput out, int[] a, int off, int len) throws IOException {
        Chunk c = BUFFER.get();
        for (int done = 0; done < len; ) {
            int n = Math.min(CHUNK, len - done);
            c.ints.put(0, a, off + done, n);
            out.write(c.bytes, 0, 4 * n);
            done += n;
        }
    }

    /** Reads {@code len} big-endian ints into {@code a[off, off + len)}. */
    public static void readInts(DataInput in, int[] a, int off, int len) throws IOException {
        Chunk c = BUFFER.get();
        for (int done = 0; done < len; ) {
            int n = Math.min(CHUNK, len - done);
            in.readFully(c.bytes, 0, 4 * n);
            c.ints.get(0, a, off + done, n);
            done += n;
        }
    }

    /** Reads {@code len} big-endian floats into {@code a[off, off + len)}. */
    public static void readFloats(DataInput in, float[] a, int off, int len) throws IOException {
        Chunk c = BUFFER.get();
        for (int done = 0; done < len; ) {
            int n = Math.min(CHUNK, len - done);
            in.readFully(c.bytes, 0, 4 * n);
            c.floats.get(0, a, off + done, n);
            done += n;
        }
        Arrays.fill(c.bytes, 0, 4 * Math.min(CHUNK, len), (byte) 0);
    }
}

package dev.nepenthe.bench.ivfpq;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The .fvecs / .ivecs formats of the ANN benchmarks (TEXMEX): each row is a little-endian int32
 * dimension followed by that many little-endian float32 (or int32) values.
 */
public final class VecFiles {
    private VecFiles() {}

    public static void writeFvecs(Path file, float[][] rows) throws IOException {
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
            for (float[] r : rows) {
                ByteBuffer b = ByteBuffer.allocate(4 + 4 * r.length).order(ByteOrder.LITTLE_ENDIAN);
                b.putInt(r.length);
                for (float f : r) {
                    b.putFloat(f);
                }
                out.write(b.array());
            }
        }
    }

    public static void writeIvecs(Path file, int[][] rows) throws IOException {
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
            for (int[] r : rows) {
                ByteBuffer b = ByteBuffer.allocate(4 + 4 * r.length).order(ByteOrder.LITTLE_ENDIAN);
                b.putInt(r.length);
                for (int x : r) {
                    b.putInt(x);
                }
                out.write(b.array());
            }
        }
    }

    /** Reads at most {@code limit} rows of an .fvecs file. */
    public static float[][] readFvecs(Path file, int limit) throws IOException {
        List<float[]> rows = new ArrayList<>();
        try (InputStream raw = new BufferedInputStream(Files.newInputStream(file), 1 << 16);
                DataInputStream in = new DataInputStream(raw)) {
            byte[] head = new byte[4];
            while (rows.size() < limit && in.read(head) == 4) {
                int dim = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).getInt();
                if (dim <= 0 || dim > 1 << 16) {
                    throw new IOException(file + ": row " + rows.size() + " declares dimension " + dim);
                }
                byte[] body = new byte[4 * dim];
                in.readFully(body);
                ByteBuffer b = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
                float[] v = new float[dim];
                for (int i = 0; i < dim; i++) {
                    v[i] = b.getFloat();
                }
                rows.add(v);
            }
        }
        return rows.toArray(new float[0][]);
    }
}

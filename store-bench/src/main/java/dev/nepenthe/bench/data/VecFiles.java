package dev.nepenthe.bench.data;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntUnaryOperator;

/**
 * The .fvecs, .ivecs and .bvecs files of the ANN benchmarks (TEXMEX: SIFT, GIST; GloVe as converted
 * by many): each row is a little-endian int32 dimension followed by that many little-endian float32
 * (.fvecs), int32 (.ivecs: ground truth) or unsigned bytes (.bvecs: SIFT1B). A reader fails naming
 * the file and the row on a dimension that is not positive, that changes from row to row, or a row
 * cut short.
 */
public final class VecFiles {
    /** A dimension above this is taken for a file of another format rather than allocated. */
    static final int MAX_DIMENSION = 1 << 16;

    private VecFiles() {}

    public static void writeFvecs(Path file, float[][] rows) throws IOException {
        write(file, rows.length, i -> rows[i].length, (b, i) -> b.asFloatBuffer().put(rows[i]));
    }

    public static void writeIvecs(Path file, int[][] rows) throws IOException {
        write(file, rows.length, i -> rows[i].length, (b, i) -> b.asIntBuffer().put(rows[i]));
    }

    /** Reads at most {@code limit} rows of an .fvecs file. */
    public static float[][] readFvecs(Path file, int limit) throws IOException {
        return read(file, limit, 4, VecFiles::floats).toArray(new float[0][]);
    }

    /**
     * Reads at most {@code limit} rows of an .ivecs file (ground truth: neighbour ordinals per
     * query).
     */
    public static int[][] readIvecs(Path file, int limit) throws IOException {
        return read(file, limit, 4, VecFiles::ints).toArray(new int[0][]);
    }

    /**
     * Reads at most {@code limit} rows of a .bvecs file, each byte as an unsigned value 0 to 255.
     */
    public static float[][] readBvecs(Path file, int limit) throws IOException {
        return read(file, limit, 1, VecFiles::unsignedBytes).toArray(new float[0][]);
    }

    private static float[] floats(ByteBuffer body, int dim) {
        float[] v = new float[dim];
        body.asFloatBuffer().get(v);
        return v;
    }

    private static int[] ints(ByteBuffer body, int dim) {
        int[] v = new int[dim];
        body.asIntBuffer().get(v);
        return v;
    }

    private static float[] unsignedBytes(ByteBuffer body, int dim) {
        float[] v = new float[dim];
        for (int i = 0; i < dim; i++) {
            v[i] = body.get() & 0xff;
        }
        return v;
    }

    /**
     * Reads at most {@code limit} float rows of {@code file} by its extension: .fvecs or .bvecs.
     */
    public static float[][] readVectors(Path file, int limit) throws IOException {
        String name = file.getFileName().toString();
        if (name.endsWith(".fvecs")) {
            return readFvecs(file, limit);
        }
        if (name.endsWith(".bvecs")) {
            return readBvecs(file, limit);
        }
        throw new IllegalArgumentException(
                file + ": expected a vector file ending in .fvecs or .bvecs");
    }

    /** Puts row {@code i}'s values after its dimension, little-endian. */
    private interface RowWriter {
        void put(ByteBuffer afterDimension, int i);
    }

    /** Writes {@code count} rows, each its dimension then the values {@code values} puts. */
    private static void write(Path file, int count, IntUnaryOperator dim, RowWriter values)
            throws IOException {
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
            for (int i = 0; i < count; i++) {
                int d = dim.applyAsInt(i);
                ByteBuffer b = ByteBuffer.allocate(4 + 4 * d).order(ByteOrder.LITTLE_ENDIAN);
                b.putInt(d);
                values.put(b, i);
                out.write(b.array());
            }
        }
    }

    /** Makes one row from its little-endian body of {@code dim} values. */
    private interface RowReader<T> {
        T take(ByteBuffer body, int dim);
    }

    /** Reads at most {@code limit} rows of {@code width}-byte values, checked as the class says. */
    private static <T> List<T> read(Path file, int limit, int width, RowReader<T> row)
            throws IOException {
        List<T> rows = new ArrayList<>();
        try (InputStream raw = new BufferedInputStream(Files.newInputStream(file), 1 << 16);
                DataInputStream in = new DataInputStream(raw)) {
            byte[] head = new byte[4];
            int first = -1;
            for (int n = 0; n < limit; n++) {
                int got = in.readNBytes(head, 0, 4);
                if (got == 0) {
                    return rows; // the file ends between rows
                }
                if (got < 4) {
                    throw badRow(file, n, "is cut short in its dimension (" + got + " of 4 bytes)");
                }
                int dim = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).getInt();
                if (dim <= 0 || dim > MAX_DIMENSION) {
                    throw badRow(
                            file,
                            n,
                            "declares dimension " + dim + "; expected 1 to " + MAX_DIMENSION);
                }
                if (first >= 0 && dim != first) {
                    throw badRow(
                            file, n, "declares dimension " + dim + ", the rows before it " + first);
                }
                first = dim;
                byte[] body = new byte[width * dim];
                try {
                    in.readFully(body);
                } catch (EOFException e) {
                    throw badRow(
                            file,
                            n,
                            "is cut short: expected " + body.length + " bytes after its dimension");
                }
                rows.add(row.take(ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN), dim));
            }
        }
        return rows;
    }

    /** What is wrong with row {@code n} of {@code file}, named so it can be found. */
    private static IOException badRow(Path file, int n, String what) {
        return new IOException(file + ": row " + n + " " + what);
    }
}

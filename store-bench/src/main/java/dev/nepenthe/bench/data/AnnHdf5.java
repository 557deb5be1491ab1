package dev.nepenthe.bench.data;

import dev.nepenthe.core.Metric;
import io.jhdf.HdfFile;
import io.jhdf.api.Attribute;
import io.jhdf.api.Dataset;
import io.jhdf.api.Node;
import io.jhdf.dataset.DatasetBase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The HDF5 files of ann-benchmarks (glove-100-angular, sift-128-euclidean, gist-960-euclidean and
 * the rest): datasets {@code train} (the base vectors), {@code test} (the queries) and {@code
 * neighbors} (each query's exact nearest, as row numbers of {@code train}), and the file attribute
 * {@code distance} ({@code euclidean}, {@code angular} or {@code dot}). Read with jhdf, a pure-Java
 * HDF5 reader; only the first rows a run asks for are read.
 */
public final class AnnHdf5 {

    /**
     * What a run reads: the first {@code n} base vectors, the first queries, their answers over the
     * whole train set.
     */
    // A carrier of data, never compared or hashed; its arrays are handed over, not copied.
    @SuppressWarnings("ArrayRecordComponent")
    public record AnnSet(
            float[][] train, float[][] test, int[][] neighbors, int trainRows, Metric metric) {}

    private AnnHdf5() {}

    /**
     * Reads the first {@code n} train vectors and the first {@code queries} test vectors and their
     * neighbours.
     *
     * @throws IOException naming the file when it is missing, not HDF5, lacks a dataset, holds too
     *     few rows, or names a distance other than euclidean, angular or dot
     */
    public static AnnSet read(Path file, int n, int queries) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IOException(file + ": no such file (expected an ann-benchmarks .hdf5 file)");
        }
        try (HdfFile hdf = new HdfFile(file)) {
            Metric metric = metric(file, hdf.getAttribute("distance"));
            Dataset train = dataset(file, hdf, "train");
            Dataset test = dataset(file, hdf, "test");
            Dataset neighbors = dataset(file, hdf, "neighbors");
            return new AnnSet(
                    floats(file, train, n),
                    floats(file, test, queries),
                    ints(file, neighbors, queries),
                    train.getDimensions()[0],
                    metric);
        } catch (RuntimeException e) {
            // jhdf reports a file that is not HDF5, or a damaged one, with unchecked exceptions.
            throw new IOException(file + ": not a readable HDF5 file (" + e.getMessage() + ")", e);
        }
    }

    private static Metric metric(Path file, Attribute distance) throws IOException {
        if (distance == null) {
            throw new IOException(
                    file
                            + ": expected a 'distance' attribute (euclidean, angular or dot), found"
                            + " none");
        }
        String d = String.valueOf(distance.getData());
        return switch (d) {
            case "euclidean" -> Metric.L2;
            case "angular", "cosine" -> Metric.COSINE;
            case "dot", "ip" -> Metric.DOT;
            default ->
                    throw new IOException(
                            file
                                    + ": expected distance euclidean, angular or dot, got '"
                                    + d
                                    + "'");
        };
    }

    private static Dataset dataset(Path file, HdfFile hdf, String name) throws IOException {
        Node node = hdf.getChildren().get(name);
        if (!(node instanceof Dataset d)) {
            throw new IOException(
                    file
                            + ": expected a dataset '"
                            + name
                            + "', found "
                            + (node == null ? "none" : node.getType()));
        }
        if (d.getDimensions().length != 2) {
            throw new IOException(
                    file
                            + ": expected '"
                            + name
                            + "' to be rows by columns, got dimensions "
                            + Arrays.toString(d.getDimensions()));
        }
        return d;
    }

    /** The first {@code rows} rows, float32 or float64 in the file. */
    private static float[][] floats(Path file, Dataset d, int rows) throws IOException {
        Object data = firstRows(file, d, rows);
        if (data instanceof float[][] f) {
            return f;
        }
        if (data instanceof double[][] dd) {
            float[][] out = new float[dd.length][];
            for (int i = 0; i < dd.length; i++) {
                out[i] = new float[dd[i].length];
                for (int j = 0; j < dd[i].length; j++) {
                    out[i][j] = (float) dd[i][j];
                }
            }
            return out;
        }
        throw new IOException(
                file + ": expected '" + d.getName() + "' to hold floats, got " + d.getJavaType());
    }

    private static int[][] ints(Path file, Dataset d, int rows) throws IOException {
        Object data = firstRows(file, d, rows);
        if (data instanceof int[][] i) {
            return i;
        }
        if (data instanceof long[][] l) {
            int[][] out = new int[l.length][];
            for (int r = 0; r < l.length; r++) {
                out[r] = Arrays.stream(l[r]).mapToInt(Math::toIntExact).toArray();
            }
            return out;
        }
        throw new IOException(
                file + ": expected '" + d.getName() + "' to hold integers, got " + d.getJavaType());
    }

    private static Object firstRows(Path file, Dataset d, int rows) throws IOException {
        int[] dims = d.getDimensions();
        if (rows > dims[0]) {
            throw new IOException(
                    file
                            + ": asked for "
                            + rows
                            + " rows of '"
                            + d.getName()
                            + "', it holds "
                            + dims[0]);
        }
        if (rows == dims[0] || !(d instanceof DatasetBase slicing)) {
            Object all = d.getData();
            return rows == dims[0] ? all : Arrays.copyOf((Object[]) all, rows);
        }
        return slicing.getData(new long[] {0, 0}, new int[] {rows, dims[1]});
    }
}

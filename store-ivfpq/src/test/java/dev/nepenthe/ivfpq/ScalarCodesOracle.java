package dev.nepenthe.ivfpq;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.testing.Datasets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The oracle side of the scalar-code tests: data sets split into lists whose centres are the exact
 * means of their members, every list encoded, and the estimates of a flat scan (every list scored)
 * compared with exact values computed in double from the prepared vectors.
 */
final class ScalarCodesOracle {
    private ScalarCodesOracle() {}

    /**
     * Synthetic data sets: Gaussian blobs, uniform noise, and blobs whose energy sits in the first
     * components.
     */
    enum Data {
        CLUSTERED,
        UNIFORM,
        SKEWED;

        float[][] vectors(long seed, int n, int dim) {
            return switch (this) {
                case CLUSTERED -> Datasets.clustered(seed, n, dim, 32, 0.3);
                case UNIFORM -> Datasets.uniform(seed, n, dim);
                case SKEWED -> {
                    // Component i scaled by 1/(i+1): without the rotation a per-vector grid
                    // would spend its levels on a handful of components.
                    float[][] v = Datasets.clustered(seed, n, dim, 32, 0.3);
                    for (float[] x : v) {
                        for (int i = 0; i < dim; i++) {
                            x[i] /= i + 1;
                        }
                    }
                    yield v;
                }
            };
        }
    }

    /**
     * Prepared base vectors and queries (drawn from the same distribution), the lists (k-means
     * assignment, or one list when {@code nlist == 1}) and each list's exact mean.
     */
    record Fixture(
            Metric metric,
            int dim,
            float[][] base,
            float[][] queries,
            int[][] members,
            float[] means) {
        int nlist() {
            return members.length;
        }
    }

    static Fixture fixture(Data data, Metric metric, long seed, int n, int nq, int dim, int nlist) {
        float[][] all = data.vectors(seed, n + nq, dim);
        float[][] base = new float[n][];
        float[][] queries = new float[nq][];
        for (int i = 0; i < n; i++) {
            base[i] = metric.prepare(all[i]);
        }
        for (int i = 0; i < nq; i++) {
            queries[i] = metric.prepare(all[n + i]);
        }
        int[] listOf = new int[n];
        if (nlist > 1) {
            float[] block = new float[n * dim];
            for (int i = 0; i < n; i++) {
                System.arraycopy(base[i], 0, block, i * dim, dim);
            }
            float[] centroids =
                    KMeans.train(
                            Kernels.scalar(), block, n, dim, nlist, 8, new SplittableRandom(seed));
            listOf = KMeans.assign(Kernels.scalar(), block, n, dim, centroids, nlist);
        }
        int[] counts = new int[nlist];
        for (int l : listOf) {
            counts[l]++;
        }
        int[][] members = new int[nlist][];
        for (int l = 0; l < nlist; l++) {
            members[l] = new int[counts[l]];
        }
        int[] fill = new int[nlist];
        for (int i = 0; i < n; i++) {
            members[listOf[i]][fill[listOf[i]]++] = i;
        }
        float[] means = new float[nlist * dim];
        for (int l = 0; l < nlist; l++) {
            if (members[l].length > 0) {
                float[] mean = mean(base, members[l], dim);
                System.arraycopy(mean, 0, means, l * dim, dim);
            }
        }
        return new Fixture(metric, dim, base, queries, members, means);
    }

    /** The mean of the given vectors, summed in double and rounded once (as ListSums gives it). */
    static float[] mean(float[][] vectors, int[] which, int dim) {
        double[] sum = new double[dim];
        for (int i : which) {
            for (int d = 0; d < dim; d++) {
                sum[d] += vectors[i][d];
            }
        }
        float[] mean = new float[dim];
        for (int d = 0; d < dim; d++) {
            mean[d] = (float) (sum[d] / which.length);
        }
        return mean;
    }

    /**
     * Every list of a fixture encoded: entries back to back per list, and the centre each was
     * encoded against.
     */
    static final class Encoded {
        final Fixture fx;
        final ScalarCodes codes;
        final ScalarCodes.Centre[] centres;
        final byte[][] entries;
        private final ScalarQueryScorer scorer;

        Encoded(Fixture fx, ScalarCodes codes) {
            this.fx = fx;
            this.codes = codes;
            int dim = fx.dim();
            int nlist = fx.nlist();
            centres = new ScalarCodes.Centre[nlist];
            entries = new byte[nlist][];
            ScalarEncoder encoder = codes.encoder();
            float[] block = new float[fx.base().length * dim];
            for (int i = 0; i < fx.base().length; i++) {
                System.arraycopy(fx.base()[i], 0, block, i * dim, dim);
            }
            for (int l = 0; l < nlist; l++) {
                centres[l] = codes.centre(fx.means(), l * dim);
                int[] m = fx.members()[l];
                int[] offsets = new int[m.length];
                for (int i = 0; i < m.length; i++) {
                    offsets[i] = m[i] * dim;
                }
                entries[l] = new byte[m.length * codes.bytesPerVector()];
                encoder.encodeList(block, offsets, m.length, centres[l], entries[l], 0);
            }
            scorer = codes.scorer();
        }

        /**
         * The estimated metric value of every base vector for {@code q}, by ordinal: a flat scan
         * over every list.
         */
        float[] estimateAll(float[] q) {
            float[] est = new float[fx.base().length];
            float[] out = new float[64];
            scorer.setQuery(q);
            for (int l = 0; l < fx.nlist(); l++) {
                int[] m = fx.members()[l];
                if (m.length == 0) {
                    continue;
                }
                if (out.length < m.length) {
                    out = new float[m.length];
                }
                scorer.setList(centres[l]);
                scorer.score(entries[l], 0, m.length, out, 0);
                for (int i = 0; i < m.length; i++) {
                    est[m[i]] = out[i];
                }
            }
            return est;
        }
    }

    /** The exact metric value: squared distance (L2, cosine) or inner product (dot), in double. */
    static double exact(Metric metric, float[] q, float[] x) {
        double s = 0;
        for (int i = 0; i < q.length; i++) {
            if (metric == Metric.DOT) {
                s += (double) q[i] * x[i];
            } else {
                double d = (double) q[i] - x[i];
                s += d * d;
            }
        }
        return s;
    }

    /**
     * What a comparison measured, over every (query, base vector) pair.
     *
     * @param scaledError mean of {@code |est <s,r> - <s,r>| / (|s||r|)} times {@code sqrt(dim)}:
     *     the error of the one estimated term, in units that do not depend on the dimension (a
     *     random rotation spreads the error over {@code dim} components)
     * @param bias sum of the signed errors of {@code <s,r>} over the sum of {@code |s||r|}
     * @param slope least-squares slope of estimated against true {@code <s,r>} through 0 (1 is
     *     unbiased in scale)
     * @param relativeError mean {@code |est - exact| / exact} for L2 and cosine, {@code / (|q||x|)}
     *     for dot
     * @param recall recall@10 of the top 10 by estimate
     * @param rerankRecall recall@10 after re-ranking the top 64 by estimate exactly
     */
    record Stats(
            double scaledError,
            double bias,
            double slope,
            double relativeError,
            double recall,
            double rerankRecall) {
        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "scaledError=%.4f bias=%+.5f slope=%.4f relativeError=%.5f recall@10=%.3f"
                            + " rerank64=%.3f",
                    scaledError,
                    bias,
                    slope,
                    relativeError,
                    recall,
                    rerankRecall);
        }
    }

    static Stats compare(Encoded enc) {
        Fixture fx = enc.fx;
        Metric metric = fx.metric();
        int dim = fx.dim();
        int n = fx.base().length;
        int[] listOf = new int[n];
        for (int l = 0; l < fx.nlist(); l++) {
            for (int i : fx.members()[l]) {
                listOf[i] = l;
            }
        }
        double absErr = 0;
        double signedErr = 0;
        double scaleSum = 0;
        double xy = 0;
        double xx = 0;
        double rel = 0;
        double recall = 0;
        double rerank = 0;
        long pairs = 0;
        for (float[] q : fx.queries()) {
            float[] est = enc.estimateAll(q);
            double[] ex = new double[n];
            for (int i = 0; i < n; i++) {
                float[] x = fx.base()[i];
                ex[i] = exact(metric, q, x);
                int cOff = listOf[i] * dim;
                double ss = 0;
                double rr = 0;
                double sr = 0;
                double qc = 0;
                double cr = 0;
                for (int d = 0; d < dim; d++) {
                    double c = fx.means()[cOff + d];
                    double s = q[d] - c;
                    double r = x[d] - c;
                    ss += s * s;
                    rr += r * r;
                    sr += s * r;
                    qc += q[d] * c;
                    cr += c * r;
                }
                // The one estimated term, recovered from the estimate by the exact others.
                double srEst = metric == Metric.DOT ? est[i] - qc - cr : (ss + rr - est[i]) / 2;
                double scale = Math.sqrt(ss * rr);
                if (scale > 0) {
                    absErr += Math.abs(srEst - sr) / scale;
                    pairs++;
                }
                signedErr += srEst - sr;
                scaleSum += scale;
                xy += srEst * sr;
                xx += sr * sr;
                double norms = Math.sqrt(exact(Metric.DOT, q, q) * exact(Metric.DOT, x, x));
                rel += Math.abs(est[i] - ex[i]) / (metric == Metric.DOT ? norms : ex[i]);
            }
            double[] estD = new double[n];
            for (int i = 0; i < n; i++) {
                estD[i] = est[i];
            }
            boolean higherIsCloser = metric == Metric.DOT;
            Integer[] truth = best(ex, n, higherIsCloser);
            Integer[] byEstimate = best(estD, n, higherIsCloser);
            Set<Integer> top = new HashSet<>(Arrays.asList(truth).subList(0, 10));
            recall += overlap(top, Arrays.copyOf(byEstimate, 10));
            Integer[] candidates = Arrays.copyOf(byEstimate, Math.min(64, n));
            Arrays.sort(
                    candidates,
                    (a, b) ->
                            higherIsCloser
                                    ? Double.compare(ex[b], ex[a])
                                    : Double.compare(ex[a], ex[b]));
            rerank += overlap(top, Arrays.copyOf(candidates, 10));
        }
        int nq = fx.queries().length;
        return new Stats(
                absErr / pairs * Math.sqrt(dim),
                signedErr / scaleSum,
                xy / xx,
                rel / ((long) nq * n),
                recall / nq,
                rerank / nq);
    }

    private static Integer[] best(double[] values, int n, boolean higherIsCloser) {
        Integer[] idx = new Integer[n];
        for (int i = 0; i < n; i++) {
            idx[i] = i;
        }
        Arrays.sort(
                idx,
                (a, b) ->
                        higherIsCloser
                                ? Double.compare(values[b], values[a])
                                : Double.compare(values[a], values[b]));
        return idx;
    }

    private static double overlap(Set<Integer> truth, Integer[] found) {
        int hit = 0;
        for (Integer o : found) {
            if (truth.contains(o)) {
                hit++;
            }
        }
        return hit / (double) truth.size();
    }
}

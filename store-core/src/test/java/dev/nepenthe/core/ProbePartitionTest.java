package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.testing.Datasets;
import dev.nepenthe.core.testing.Seeds;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.roaringbitmap.RoaringBitmap;

/**
 * The probe partition against its oracle, a scan of every record: the candidates it returns
 * hold every record at or above the threshold (for any probe, threshold and history of adds
 * and removals), and on clustered data they are far fewer than the records.
 */
class ProbePartitionTest {

    private static final VectorKernels K = Kernels.get();

    /** Records by ordinal, as the collection keeps them; null where removed. */
    private final List<float[]> vectors = new ArrayList<>();

    private ProbePartition partition(int leaf) {
        return new ProbePartition(K, ord -> vectors.get(ord), leaf);
    }

    private RoaringBitmap live() {
        RoaringBitmap b = new RoaringBitmap();
        for (int i = 0; i < vectors.size(); i++) {
            if (vectors.get(i) != null) {
                b.add(i);
            }
        }
        return b;
    }

    /** The oracle: every live record whose cosine with a probe is at or above the threshold. */
    private RoaringBitmap scan(float[][] probes, double threshold) {
        RoaringBitmap out = new RoaringBitmap();
        for (int ord = 0; ord < vectors.size(); ord++) {
            float[] v = vectors.get(ord);
            if (v == null) {
                continue;
            }
            double n = Math.sqrt(K.dot(v, v));
            for (float[] q : probes) {
                if (K.dot(v, q) / n >= threshold) {
                    out.add(ord);
                }
            }
        }
        return out;
    }

    private static float[] unit(float[] v) {
        return Metric.COSINE.prepare(v);
    }

    /** A near copy of {@code v}: cosine about {@code 1 - noise^2 / 2}. */
    private static float[] near(float[] v, double noise, SplittableRandom rnd) {
        double n = 0;
        for (float x : v) {
            n += x * x;
        }
        double scale = Math.sqrt(n / v.length) * noise;
        float[] out = v.clone();
        for (int i = 0; i < out.length; i++) {
            out[i] += (float) ((rnd.nextDouble() * 2 - 1) * Math.sqrt(3) * scale);
        }
        return out;
    }

    @Test
    void candidatesHoldEveryRecordAtOrAboveTheThresholdThroughAddsAndRemovals() {
        long seed = Seeds.draw("ProbePartitionTest.candidatesHoldEveryRecord");
        SplittableRandom rnd = new SplittableRandom(seed);
        int dim = 48;
        float[][] data = Datasets.clustered(seed, 6000, dim, 12, 0.6);
        ProbePartition p = partition(64);
        // Half loaded at once (open), half one by one (upserts), with near copies planted.
        int[] first = new int[3000];
        for (int i = 0; i < 3000; i++) {
            vectors.add(data[i]);
            first[i] = i;
        }
        p.addAll(first);
        for (int i = 3000; i < 6000; i++) {
            float[] v = i % 50 == 0 ? near(data[rnd.nextInt(i)], 0.2, rnd) : data[i];
            vectors.add(v);
            p.add(i, v);
        }
        for (int round = 0; round < 6; round++) {
            // Remove a random fifth (pivots among them), then reuse some ordinals.
            for (int ord = 0; ord < vectors.size(); ord++) {
                if (vectors.get(ord) != null && rnd.nextInt(5) == 0) {
                    p.remove(ord);
                    vectors.set(ord, null);
                }
            }
            for (int ord = 0; ord < vectors.size(); ord++) {
                if (vectors.get(ord) == null && rnd.nextInt(3) == 0) {
                    float[] v = near(data[rnd.nextInt(data.length)], 0.3, rnd);
                    vectors.set(ord, v);
                    p.add(ord, v);
                }
            }
            IntegrityReport report = p.verify(live());
            assertTrue(report.isClean(), report + Seeds.replay(seed));
            for (double threshold : new double[] {0.99, 0.95, 0.85, 0.6, 0.0, -1.0}) {
                float[][] probes = new float[5][];
                for (int i = 0; i < probes.length; i++) {
                    probes[i] = unit(near(data[rnd.nextInt(data.length)], 0.1 + 0.1 * i, rnd));
                }
                RoaringBitmap expected = scan(probes, threshold);
                RoaringBitmap got = p.candidates(probes, threshold);
                assertTrue(RoaringBitmap.andNot(expected, got).isEmpty(), "round " + round + " threshold " + threshold
                        + ": missed " + RoaringBitmap.andNot(expected, got) + Seeds.replay(seed));
            }
        }
    }

    @Test
    void onWellSeparatedClustersMostRecordsAreNeverScored() {
        long seed = Seeds.draw("ProbePartitionTest.onWellSeparatedClusters");
        SplittableRandom rnd = new SplittableRandom(seed);
        float[][] data = Datasets.clustered(seed, 20000, 64, 40, 0.5);
        ProbePartition p = partition(256);
        for (int i = 0; i < data.length; i++) {
            vectors.add(data[i]);
            p.add(i, data[i]);
        }
        float[][] probes = new float[10][];
        for (int i = 0; i < probes.length; i++) {
            probes[i] = unit(data[rnd.nextInt(data.length)]);
        }
        RoaringBitmap got = p.candidates(probes, 0.85);
        assertTrue(RoaringBitmap.andNot(scan(probes, 0.85), got).isEmpty(), Seeds.replay(seed));
        // Ten probes each see their own topic (a fortieth of the data, so about a quarter for
        // the ten) and little else; a partition that skipped nothing would return every record.
        assertTrue(got.getCardinality() < data.length / 2,
                got.getCardinality() + " of " + data.length + " records are candidates" + Seeds.replay(seed));
        assertTrue(p.clusters() > data.length / 512, p.clusters() + " clusters");
    }

    @Test
    void theCheckerFindsARemovedRecordStillHeldAndAWrongAngle() {
        float[][] data = Datasets.clustered(3, 600, 16, 4, 0.5);
        ProbePartition p = partition(16);
        int[] ords = new int[data.length];
        for (int i = 0; i < data.length; i++) {
            vectors.add(data[i]);
            ords[i] = i;
        }
        p.addAll(ords);
        assertTrue(p.verify(live()).isClean());
        assertTrue(p.clusters() > 10, p.clusters() + " clusters");

        // A record the collection removed without telling the partition: still held.
        vectors.set(7, data[8]); // its ordinal still resolves (the checker reads the vector)
        RoaringBitmap liveWithout7 = live();
        liveWithout7.remove(7);
        IntegrityReport r = p.verify(liveWithout7);
        assertEquals(1, r.violations("removed-record-held"), r.toString());
        assertFalse(p.verifyRemoved(new int[] {7}, new RoaringBitmap()).isEmpty());

        // Its vector changed under it: the stored angle no longer matches.
        assertTrue(p.verify(live()).violations("angle-mismatch") >= 1);

        // Told properly: clean again, and the scoped check agrees.
        p.remove(7);
        vectors.set(7, null);
        assertTrue(p.verify(live()).isClean(), p.verify(live()).toString());
        assertTrue(p.verifyRemoved(new int[] {7}, new RoaringBitmap()).isEmpty());
    }

    @Test
    void removingEveryPivotKeepsThePartitionExact() {
        float[][] data = Datasets.clustered(11, 2000, 32, 8, 0.5);
        ProbePartition p = partition(32);
        for (int i = 0; i < data.length; i++) {
            vectors.add(data[i]);
            p.add(i, data[i]);
        }
        // Remove records in order: each cluster's pivot goes sooner or later, many times over.
        for (int ord = 0; ord < 1800; ord++) {
            p.remove(ord);
            vectors.set(ord, null);
            if (ord % 300 == 0) {
                assertTrue(p.verify(live()).isClean(), "after removing " + ord);
            }
        }
        float[][] probes = {unit(data[1900]), unit(data[10])};
        assertTrue(RoaringBitmap.andNot(scan(probes, 0.5), p.candidates(probes, 0.5)).isEmpty());
        assertTrue(p.verify(live()).isClean());
    }
}

package dev.nepenthe.core;

import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.IntFunction;
import org.roaringbitmap.RoaringBitmap;

/**
 * Lets the forget probe stay exact without comparing a forgotten vector with every record: the
 * collection's records are split into clusters of about {@link #leafSize} around a pivot (a
 * live record), and each record keeps its angle to its pivot. Angles on the sphere obey the
 * triangle inequality, so a record x can be within angle t of a probe q only if
 * {@code |angle(q, pivot) - angle(x, pivot)| <= t}: a cluster whose radius (the largest member
 * angle) is more than t nearer than q's angle to its pivot is skipped whole, and inside the
 * others only records in that band are scored exactly. Nothing is approximated: the candidates
 * are a superset of the records at or above the threshold, and the caller scores each exactly.
 * How much is skipped depends on the data (well-separated topics skip most clusters; vectors
 * spread evenly over the sphere skip little, and the probe then costs a full scan again).
 *
 * <p>Only angles and ordinals are kept; a pivot's vector is read from its record, never copied,
 * so nothing here outlives a record: removing a pivot picks a new one among its members and
 * recomputes their angles (the cost of one cluster). What stays is second-order: which records
 * were pivots and which cluster a record joined while a removed record was present.
 *
 * <p>Not thread-safe: the collection calls it under its writer mutex.
 */
final class ProbePartition {

    /**
     * Slack added to the angular threshold (radians), covering float rounding in the angles
     * (an angle near 0 from a float dot can be off by a few thousandths of a radian).
     */
    static final double SLACK = 0.02;

    private final VectorKernels kernels;
    private final IntFunction<float[]> vectorOf;
    private final int leafSize;
    private final SplittableRandom random = new SplittableRandom(0x5EED_F0E7L);

    /** Per ordinal: its cluster (-1 when not held), its angle to the pivot, its norm. */
    private int[] clusterOf = new int[0];
    private float[] angle = new float[0];
    private float[] norm = new float[0];
    private final List<Cluster> clusters = new ArrayList<>();

    private static final class Cluster {
        int pivot;
        final RoaringBitmap members = new RoaringBitmap();
        /** At least the largest member angle (a removal leaves it high, which stays safe). */
        float radius;
        /** Size at which a split last found nothing to separate (identical vectors), or 0. */
        int unsplittableAt;
    }

    /**
     * @param vectorOf the live record's vector at an ordinal (read when a cluster's angles are
     *     computed); every ordinal held here must resolve
     */
    ProbePartition(VectorKernels kernels, IntFunction<float[]> vectorOf, int leafSize) {
        if (leafSize < 2) {
            throw new IllegalArgumentException("leaf size: expected at least 2, got " + leafSize);
        }
        this.kernels = kernels;
        this.vectorOf = vectorOf;
        this.leafSize = leafSize;
    }

    int clusters() {
        return clusters.size();
    }

    /** The norm of a held record's vector, as {@code sqrt(kernels.dot(v, v))} gives it; 0 if not held. */
    float norm(int ord) {
        return ord < norm.length ? norm[ord] : 0f;
    }

    boolean holds(int ord) {
        return ord < clusterOf.length && clusterOf[ord] >= 0;
    }

    /**
     * Adds a record: one comparison with each pivot, plus a split (the cost of one cluster)
     * when its cluster has grown past twice the leaf size. A zero vector is not held (its
     * cosine with anything is undefined, and the probe skips it).
     */
    void add(int ord, float[] v) {
        float n = (float) Math.sqrt(kernels.dot(v, v));
        grow(ord);
        if (n == 0) {
            return;
        }
        norm[ord] = n;
        if (clusters.isEmpty()) {
            Cluster c = new Cluster();
            c.pivot = ord;
            clusters.add(c);
        }
        int best = nearestCluster(v, n);
        double bestCos = kernels.dot(v, vectorOf.apply(clusters.get(best).pivot))
                / ((double) n * norm[clusters.get(best).pivot]);
        Cluster c = clusters.get(best);
        float a = c.pivot == ord ? 0f : angleOf(bestCos);
        c.members.add(ord);
        clusterOf[ord] = best;
        angle[ord] = a;
        c.radius = Math.max(c.radius, a);
        if (c.members.getCardinality() > 2 * leafSize) {
            split(best);
        }
    }

    /**
     * Builds from scratch from many records at once (open): one cluster split in two until
     * every cluster holds at most twice the leaf size, about n log(n / leafSize) comparisons.
     */
    void addAll(int[] ords) {
        RoaringBitmap all = new RoaringBitmap();
        for (int ord : ords) {
            grow(ord);
            float[] v = vectorOf.apply(ord);
            float n = (float) Math.sqrt(kernels.dot(v, v));
            if (n != 0) {
                norm[ord] = n;
                all.add(ord);
            }
        }
        if (all.isEmpty()) {
            return;
        }
        if (!clusters.isEmpty()) {
            all.forEach((int ord) -> add(ord, vectorOf.apply(ord)));
            return;
        }
        Cluster c = new Cluster();
        c.pivot = all.first();
        c.members.or(all);
        clusters.add(c);
        all.forEach((int ord) -> clusterOf[ord] = 0);
        repivot(0, c.pivot);
        split(0);
    }

    /**
     * Removes a record. If it was a pivot, the member nearest to it takes over and the
     * cluster's angles are recomputed; the removed record's angle and norm are zeroed.
     */
    void remove(int ord) {
        if (!holds(ord)) {
            return;
        }
        int ci = clusterOf[ord];
        Cluster c = clusters.get(ci);
        c.members.remove(ord);
        clusterOf[ord] = -1;
        angle[ord] = 0f;
        if (c.members.isEmpty()) {
            dropCluster(ci);
        } else if (c.pivot == ord) {
            int next = -1;
            float nearest = Float.MAX_VALUE;
            for (org.roaringbitmap.IntIterator it = c.members.getIntIterator(); it.hasNext();) {
                int m = it.next();
                if (angle[m] < nearest) {
                    nearest = angle[m];
                    next = m;
                }
            }
            repivot(ci, next);
        }
        norm[ord] = 0f;
    }

    /**
     * Every held record whose cosine with one of the unit-length {@code probes} may be at or
     * above {@code threshold}: a superset of those that are, to be scored exactly.
     */
    RoaringBitmap candidates(float[][] probes, double threshold) {
        RoaringBitmap out = new RoaringBitmap();
        for (float[] q : probes) {
            out.or(candidates(q, threshold));
        }
        return out;
    }

    /** Every held record whose cosine with the unit-length {@code q} may be at or above {@code threshold}. */
    RoaringBitmap candidates(float[] q, double threshold) {
        RoaringBitmap out = new RoaringBitmap();
        double t = threshold >= 1 ? 0 : threshold <= -1 ? Math.PI : Math.acos(threshold);
        float band = (float) (t + SLACK);
        {
            for (Cluster c : clusters) {
                int p = c.pivot;
                float qp = angleOf(kernels.dot(q, vectorOf.apply(p)) / (double) norm[p]);
                if (qp - c.radius > band) {
                    continue; // every member is further than the band from q
                }
                float lo = qp - band;
                float hi = qp + band;
                for (org.roaringbitmap.IntIterator it = c.members.getIntIterator(); it.hasNext();) {
                    int m = it.next();
                    if (angle[m] >= lo && angle[m] <= hi) {
                        out.add(m);
                    }
                }
            }
        }
        return out;
    }

    /**
     * The partition's checker: every live record with a non-zero vector is held in exactly
     * one cluster, at the angle its vector has to the pivot, within the cluster's radius;
     * every pivot is a live member of its own cluster; nothing else is held. Costs one
     * comparison per record.
     *
     * @param live the ordinals of every live record
     */
    IntegrityReport verify(RoaringBitmap live) {
        IntegrityReport.Builder r = IntegrityReport.builder("probe-partition").expect("record-not-held")
                .expect("removed-record-held").expect("angle-mismatch").expect("outside-radius")
                .expect("pivot-not-member").expect("cluster-mismatch");
        long held = 0;
        for (int ci = 0; ci < clusters.size(); ci++) {
            Cluster c = clusters.get(ci);
            if (!c.members.contains(c.pivot) || !live.contains(c.pivot)) {
                r.violation("pivot-not-member", "cluster " + ci + " pivot ordinal " + c.pivot);
                continue;
            }
            float[] p = vectorOf.apply(c.pivot);
            for (org.roaringbitmap.IntIterator it = c.members.getIntIterator(); it.hasNext();) {
                int m = it.next();
                held++;
                if (!live.contains(m)) {
                    r.violation("removed-record-held", "ordinal " + m + " in cluster " + ci);
                    continue;
                }
                if (clusterOf[m] != ci) {
                    r.violation("cluster-mismatch", "ordinal " + m + " is in cluster " + ci + " but names " + clusterOf[m]);
                }
                float[] v = vectorOf.apply(m);
                float n = (float) Math.sqrt(kernels.dot(v, v));
                float a = m == c.pivot ? 0f : angleOf(kernels.dot(v, p) / ((double) n * norm[c.pivot]));
                if (n != norm[m] || Math.abs(a - angle[m]) > 1e-6f) {
                    r.violation("angle-mismatch", "ordinal " + m + " holds angle " + angle[m] + ", its vector gives " + a);
                }
                if (angle[m] > c.radius) {
                    r.violation("outside-radius", "ordinal " + m + " at " + angle[m] + " beyond radius " + c.radius);
                }
            }
        }
        live.forEach((int ord) -> {
            if (!holds(ord)) {
                float[] v = vectorOf.apply(ord);
                if (kernels.dot(v, v) != 0) {
                    r.violation("record-not-held", "ordinal " + ord);
                }
            }
        });
        for (int ord = 0; ord < clusterOf.length; ord++) {
            int ci = clusterOf[ord];
            boolean seenAbove = ci >= 0 && ci < clusters.size() && clusters.get(ci).members.contains(ord);
            if (ci >= 0 && !live.contains(ord) && !seenAbove) {
                r.violation("removed-record-held", "ordinal " + ord + " names cluster " + clusterOf[ord]);
            }
        }
        return r.checked("records", held).checked("clusters", clusters.size()).build();
    }

    /**
     * The scoped proof after a removal: none of {@code removed} is held, or it is held as the
     * live record now at that ordinal ({@code reused}), and no pivot is a removed record.
     * Costs the scope plus one look at each pivot.
     */
    List<String> verifyRemoved(int[] removed, RoaringBitmap reused) {
        List<String> problems = new ArrayList<>();
        int stillHeld = 0;
        for (int ord : removed) {
            if (!reused.contains(ord) && (holds(ord) || (ord < angle.length && (angle[ord] != 0 || norm[ord] != 0)))) {
                stillHeld++;
            }
        }
        if (stillHeld > 0) {
            problems.add("probe partition: " + stillHeld + " removed records still held or not zeroed");
        }
        RoaringBitmap gone = RoaringBitmap.bitmapOf(removed);
        gone.andNot(reused);
        for (Cluster c : clusters) {
            if (gone.contains(c.pivot)) {
                problems.add("probe partition: a removed record is still a pivot");
                break;
            }
        }
        return problems;
    }

    // ---- routing: which cluster a new record joins

    /*
     * Any cluster is correct for a new record (a cluster's radius covers whatever joins it);
     * the nearest one keeps radii small, so probes skip more. Comparing with every pivot would
     * cost thousands of comparisons per write at a million records, so clusters are grouped
     * under about sqrt(K) heads: a record is compared with the heads, then with the clusters of
     * its best head's group and those made since the groups were drawn (about 3 sqrt(K)).
     */
    private int[] heads = new int[0];
    private int[][] groups = new int[0][];
    private final org.roaringbitmap.RoaringBitmap recent = new org.roaringbitmap.RoaringBitmap();
    private boolean routingStale = true;

    private int nearestCluster(float[] v, float n) {
        int k = clusters.size();
        if (k <= 64) {
            return nearestOf(v, n, null, k);
        }
        if (routingStale || recent.getCardinality() > Math.max(16, (int) Math.sqrt(k))) {
            drawGroups();
        }
        int head = heads[nearestOf(v, n, heads, heads.length)];
        int best = -1;
        double bestCos = Double.NEGATIVE_INFINITY;
        for (int ci : groups[head]) {
            double cos = cosToPivot(v, n, ci);
            if (cos > bestCos) {
                bestCos = cos;
                best = ci;
            }
        }
        for (org.roaringbitmap.IntIterator it = recent.getIntIterator(); it.hasNext();) {
            int ci = it.next();
            double cos = cosToPivot(v, n, ci);
            if (cos > bestCos) {
                bestCos = cos;
                best = ci;
            }
        }
        return best;
    }

    private double cosToPivot(float[] v, float n, int ci) {
        int p = clusters.get(ci).pivot;
        return kernels.dot(v, vectorOf.apply(p)) / ((double) n * norm[p]);
    }

    /** The position (in {@code among}, or among all clusters when null) of the most similar pivot. */
    private int nearestOf(float[] v, float n, int[] among, int count) {
        int best = 0;
        double bestCos = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < count; i++) {
            double cos = cosToPivot(v, n, among == null ? i : among[i]);
            if (cos > bestCos) {
                bestCos = cos;
                best = i;
            }
        }
        return best;
    }

    /** Draws about sqrt(K) heads, spread over the clusters, and puts every cluster under its nearest. */
    private void drawGroups() {
        int k = clusters.size();
        int g = Math.max(1, (int) Math.ceil(Math.sqrt(k)));
        heads = new int[g];
        for (int i = 0; i < g; i++) {
            heads[i] = (int) ((long) i * k / g);
        }
        int[] headOf = new int[k];
        int[] sizes = new int[k];
        for (int ci = 0; ci < k; ci++) {
            int p = clusters.get(ci).pivot;
            headOf[ci] = heads[nearestOf(vectorOf.apply(p), norm[p], heads, g)];
            sizes[headOf[ci]]++;
        }
        groups = new int[k][];
        for (int h : heads) {
            groups[h] = new int[sizes[h]];
            sizes[h] = 0;
        }
        for (int ci = 0; ci < k; ci++) {
            groups[headOf[ci]][sizes[headOf[ci]]++] = ci;
        }
        recent.clear();
        routingStale = false;
    }

    // ---- internals

    private void grow(int ord) {
        if (ord >= clusterOf.length) {
            int cap = Math.max(ord + 1, clusterOf.length + (clusterOf.length >> 1) + 16);
            int old = clusterOf.length;
            clusterOf = Arrays.copyOf(clusterOf, cap);
            Arrays.fill(clusterOf, old, cap, -1);
            angle = Arrays.copyOf(angle, cap);
            norm = Arrays.copyOf(norm, cap);
        }
    }

    private static float angleOf(double cos) {
        return (float) Math.acos(Math.max(-1.0, Math.min(1.0, cos)));
    }

    /** Makes {@code pivot} the cluster's pivot and recomputes every member's angle and the radius. */
    private void repivot(int ci, int pivot) {
        Cluster c = clusters.get(ci);
        c.pivot = pivot;
        float[] p = vectorOf.apply(pivot);
        float radius = 0;
        for (org.roaringbitmap.IntIterator it = c.members.getIntIterator(); it.hasNext();) {
            int m = it.next();
            float a = m == pivot ? 0f : angleOf(kernels.dot(vectorOf.apply(m), p) / ((double) norm[m] * norm[pivot]));
            angle[m] = a;
            radius = Math.max(radius, a);
        }
        c.radius = radius;
    }

    /** Most clusters one split makes (the rest comes from splitting the parts again). */
    private static final int MAX_SPLIT = 16;

    /**
     * Splits a cluster around new pivots drawn from its members by farthest-first traversal
     * (each next pivot the member least like the pivots so far, which bounds the largest
     * radius within twice the best possible), every member joining its most similar pivot;
     * parts still too large are split again. Costs (pivots x members) comparisons.
     */
    private void split(int ci) {
        Cluster c = clusters.get(ci);
        int size = c.members.getCardinality();
        if (size <= 2 * leafSize || (c.unsplittableAt > 0 && size < 2 * c.unsplittableAt)) {
            return;
        }
        int[] members = c.members.toArray();
        int k = MAX_SPLIT;
        int[] pivots = new int[k];
        double[] bestCos = new double[size];
        int[] owner = new int[size];
        java.util.Arrays.fill(bestCos, Double.NEGATIVE_INFINITY);
        int next = random.nextInt(size);
        int chosen = 0;
        while (chosen < k) {
            int pivot = members[next];
            pivots[chosen] = pivot;
            float[] pv = vectorOf.apply(pivot);
            int farthest = -1;
            double lowest = Double.POSITIVE_INFINITY;
            for (int i = 0; i < size; i++) {
                int m = members[i];
                if (m == pivot) {
                    bestCos[i] = Double.POSITIVE_INFINITY; // a pivot stays with its own part
                    owner[i] = chosen;
                } else if (bestCos[i] != Double.POSITIVE_INFINITY) {
                    double cos = kernels.dot(vectorOf.apply(m), pv) / ((double) norm[m] * norm[pivot]);
                    if (cos > bestCos[i]) {
                        bestCos[i] = cos;
                        owner[i] = chosen;
                    }
                }
                if (bestCos[i] < lowest) {
                    lowest = bestCos[i];
                    farthest = i;
                }
            }
            chosen++;
            if (lowest >= 1 - 1e-6) {
                break; // every member is (almost) a pivot's duplicate: nothing more to separate
            }
            next = farthest;
        }
        if (chosen < 2) {
            c.unsplittableAt = size; // identical vectors: try again once the cluster has doubled
            return;
        }
        c.unsplittableAt = 0;
        int[] index = new int[chosen];
        index[0] = ci;
        c.members.clear();
        c.pivot = pivots[0];
        c.radius = 0;
        for (int j = 1; j < chosen; j++) {
            Cluster part = new Cluster();
            part.pivot = pivots[j];
            index[j] = clusters.size();
            recent.add(index[j]);
            clusters.add(part);
        }
        for (int i = 0; i < size; i++) {
            int m = members[i];
            Cluster part = clusters.get(index[owner[i]]);
            part.members.add(m);
            clusterOf[m] = index[owner[i]];
            float a = m == part.pivot ? 0f : angleOf(bestCos[i]);
            angle[m] = a;
            part.radius = Math.max(part.radius, a);
        }
        for (int j = 0; j < chosen; j++) {
            split(index[j]);
        }
    }

    /** Removes an empty cluster, moving the last one into its place. */
    private void dropCluster(int ci) {
        routingStale = true; // the groups name clusters by position, and one moves
        int last = clusters.size() - 1;
        if (ci != last) {
            Cluster moved = clusters.get(last);
            clusters.set(ci, moved);
            moved.members.forEach((int m) -> clusterOf[m] = ci);
        }
        clusters.remove(last);
    }
}

package dev.nepenthe.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.AbstractVectorIndex;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.IndexDescription;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.internal.index.IndexChecks;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * An HNSW index whose {@link #remove} deletes for real: the node leaves every list on every layer,
 * each list that held it is re-selected without it, its vector bytes are zeroed and its slot
 * recycled, and {@link #verifyIntegrity()} proves it.
 *
 * <p>Roles: {@link HnswGraph} is the layout, {@link HnswInserter} builds, {@link HnswSearcher}
 * walks, {@link HnswRepairer} removes and repairs, {@link HnswIntegrityChecker} verifies.
 *
 * <p>Concurrency, with two locks taken in this order:
 *
 * <ul>
 *   <li>the writer gate: inserts share it, a removal (or save, or check) holds it alone, so a
 *       repair never races an insert that could link to the node being removed;
 *   <li>the slot lock: inserts share it; growing the arrays and freeing removed slots hold it
 *       alone.
 * </ul>
 *
 * Searches take neither, nor any other lock: they walk the layout published last and drop a result
 * whose slot was freed after they began (see {@link HnswGraph}), so a search that starts after
 * {@code remove} returns never returns that ordinal, and one that runs across it returns it only
 * with the score of its own vector. No search waits for an insert, a repair or a grow.
 */
public final class HnswIndex extends AbstractVectorIndex {

    public static final String KIND = "hnsw";
    static final String FORMAT = "nepenthe-hnsw";

    /** The file format's version; what each version changed is listed in {@link HnswFile}. */
    static final int VERSION = 5;

    static final int OLDEST_VERSION = 1;

    private final int dim;
    private final Metric metric;
    private final HnswParams params;
    private final HnswGraph graph;
    private final HnswInserter inserter;
    private final HnswRepairer repairer;
    private final ReachabilityCertifier certifier;
    private final ReentrantReadWriteLock writerGate = new ReentrantReadWriteLock();
    private final ReentrantReadWriteLock slotLock = new ReentrantReadWriteLock();
    private final Object allocation = new Object();

    /**
     * Ordinal to slot, -1 where the ordinal is not live. Grows under the slot lock's write side.
     */
    private volatile int[] ordToSlot = new int[16];

    private static final VarHandle ORD_TO_SLOT = MethodHandles.arrayElementVarHandle(int[].class);
    private int live;

    /** The upper-layer beam of a search; 1 (greedy) only in tests, as their control. */
    int upperBeam = HnswSearcher.UPPER_BEAM;

    /** What each removal changed, for {@link #verifyRemoval}. */
    private final RemovalTraces traces = new RemovalTraces();

    public HnswIndex(int dimension, Metric metric, HnswParams params) {
        this(dimension, metric, params, Kernels.get(), 1024);
    }

    /**
     * @param initialCapacity slots allocated up front; growing later copies every array once under
     *     an exclusive lock, so a known size avoids pauses
     */
    public HnswIndex(
            int dimension,
            Metric metric,
            HnswParams params,
            VectorKernels kernels,
            int initialCapacity) {
        super(KIND, dimension, metric);
        this.dim = dimension;
        this.metric = metric;
        this.params = Objects.requireNonNull(params, "params");
        this.graph =
                new HnswGraph(
                        dimension,
                        metric,
                        kernels,
                        params.m(),
                        initialCapacity,
                        params.quantization(),
                        params.storage());
        this.inserter = new HnswInserter(graph, params.efConstruction());
        this.repairer = new HnswRepairer(graph, params.repairEf());
        this.certifier = new ReachabilityCertifier(graph, params.repairEf());
        Arrays.fill(ordToSlot, -1);
    }

    public HnswParams params() {
        return params;
    }

    /**
     * The level a node with this ordinal gets: a seeded hash, so builds repeat in any thread order.
     */
    int levelFor(int ordinal) {
        long z = params.seed() ^ (ordinal * 0x9E3779B97F4A7C15L);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        z ^= z >>> 31;
        double u = ((z >>> 11) + 1) * 0x1.0p-53; // (0, 1]
        return (int)
                Math.min(HnswGraph.MAX_LEVEL, Math.floor(-Math.log(u) * params.levelMultiplier()));
    }

    @Override
    public void add(int ordinal, float[] vector) {
        IndexChecks.checkAdd(ordinal, vector, dim);
        float[] prepared = metric.prepare(vector);
        int level = levelFor(ordinal);
        writerGate.readLock().lock();
        try {
            int slot = -1;
            while (slot < 0) {
                slotLock.readLock().lock();
                synchronized (allocation) {
                    if (ordinal < ordToSlot.length && ordToSlot[ordinal] >= 0) {
                        slotLock.readLock().unlock();
                        throw IndexChecks.alreadyLive(ordinal);
                    }
                    if (graph.hasRoom() && ordinal < ordToSlot.length) {
                        slot = graph.allocate(ordinal, level);
                        graph.store().setVector(slot, prepared);
                        // Release: an exact filtered scan that finds the slot sees its vector.
                        ORD_TO_SLOT.setRelease(ordToSlot, ordinal, slot);
                        live++;
                    }
                }
                if (slot < 0) {
                    slotLock.readLock().unlock();
                    grow(ordinal);
                }
            }
            try {
                inserter.insert(slot, level);
            } finally {
                slotLock.readLock().unlock();
            }
        } finally {
            writerGate.readLock().unlock();
        }
        certifyIfAlone();
    }

    /**
     * An insert re-selects its neighbours' lists, and the heuristic can drop the last link into a
     * few nodes, cutting them off (seen after removals and re-inserts). While the reachability
     * labels are valid, the certificate ({@link ReachabilityCertifier#certifyReachability}) checks
     * the nodes the insert touched and links any stranded one back, at their cost. Only when no
     * other writer is in flight: a parallel bulk load skips it and reconnects once at its end
     * ({@link #afterBulkLoad}).
     */
    private void certifyIfAlone() {
        if (!graph.labelsValid() || !graph.hasPendingCertificates()) {
            return;
        }
        if (writerGate.writeLock().tryLock()) {
            try {
                certifier.certifyReachability();
            } finally {
                writerGate.writeLock().unlock();
            }
        }
    }

    private void grow(int ordinal) {
        slotLock.writeLock().lock();
        try {
            if (!graph.hasRoom()) {
                int cap = graph.capacity();
                graph.grow(cap + Math.max(16, cap >> 1));
            }
            if (ordinal >= ordToSlot.length) {
                int old = ordToSlot.length;
                ordToSlot = Arrays.copyOf(ordToSlot, Math.max(ordinal + 1, old + (old >> 1)));
                Arrays.fill(ordToSlot, old, ordToSlot.length, -1);
            }
        } finally {
            slotLock.writeLock().unlock();
        }
    }

    @Override
    public boolean remove(int ordinal) {
        return removeAll(new int[] {ordinal}) == 1;
    }

    /**
     * Removes a batch with one shared repair: a list that linked to several removed nodes is
     * re-selected once per layer, not once per node.
     */
    @Override
    public int removeAll(int[] ordinals) {
        writerGate.writeLock().lock();
        try {
            int[] slots = new int[ordinals.length];
            int n = 0;
            for (int ord : ordinals) {
                if (ord >= 0
                        && ord < ordToSlot.length
                        && ordToSlot[ord] >= 0
                        && graph.state(ordToSlot[ord]) == HnswGraph.LIVE) {
                    int slot = ordToSlot[ord];
                    graph.markDeleting(slot); // also de-duplicates repeated ordinals in the batch
                    slots[n++] = slot;
                }
            }
            if (n == 0) {
                return 0;
            }
            int[] ords = new int[n];
            for (int i = 0; i < n; i++) {
                ords[i] = graph.ordinal(slots[i]);
            }
            // The scope verifyRemoval checks: the neighbourhood now, then what the repair changes.
            IntBag touched = RemovalTraces.neighbourhood(graph, slots, n);
            graph.recordChanges(touched);
            try {
                // 1. Unlink and repair while searches keep running (they skip the marked slots).
                repairer.remove(slots, n);
                // 2. The local rules keep paths through a removed node but do not prove that every
                //    node is still reachable; the reachability certificate does, at the cost of the
                //    nodes that lost an in-link (a full walk only when it cannot: a moved entry
                //    point, a node with no live in-link left).
                certifier.certifyReachability();
            } finally {
                graph.recordChanges(null);
            }
            // 3. Free the slots once no running search can still hold one.
            slotLock.writeLock().lock();
            try {
                // Stamped first: a search holding one of these slots drops it (HnswGraph).
                int epoch = graph.beginFrees(slots, n);
                for (int i = 0; i < n; i++) {
                    int slot = slots[i];
                    ORD_TO_SLOT.setRelease(ordToSlot, graph.ordinal(slot), -1);
                    graph.free(slot);
                }
                graph.endFrees(epoch);
                synchronized (allocation) {
                    live -= n;
                }
            } finally {
                slotLock.writeLock().unlock();
            }
            traces.keep(ords, slots, n, touched);
            return n;
        } finally {
            writerGate.writeLock().unlock();
        }
    }

    /**
     * Links every live node that layer 0 cannot reach from the entry point back into the graph.
     * Removals call it themselves (see {@link #removeAll}); call it after a run of single removals
     * from a large graph before relying on full reachability, and after a concurrent bulk load,
     * where racing inserts can, rarely, prune the last link into a node (Lucene connects components
     * after a merge for the same reason). Cost: one pass over every list.
     *
     * @return how many stranded nodes were linked back
     */
    public int connectUnreachable() {
        writerGate.writeLock().lock();
        try {
            return certifier.connectUnreachable();
        } finally {
            writerGate.writeLock().unlock();
        }
    }

    /** Full layer-0 walks so far (the bulk load's, and removals that could not certify locally). */
    long fullWalks() {
        writerGate.writeLock().lock();
        try {
            return certifier.fullWalks;
        } finally {
            writerGate.writeLock().unlock();
        }
    }

    /** Labels the reachability certificate raised since the index was created (for tests). */
    long relabelled() {
        writerGate.writeLock().lock();
        try {
            return certifier.relabelled;
        } finally {
            writerGate.writeLock().unlock();
        }
    }

    /** Reconnects nodes a concurrent bulk load left unreachable ({@link #connectUnreachable()}). */
    @Override
    public void afterBulkLoad() {
        connectUnreachable();
    }

    /**
     * Repair work since the index was created: {lists re-selected, nodes re-linked, vector
     * comparisons made by repairs} (for benchmarks and operators).
     */
    public long[] repairCounts() {
        writerGate.writeLock().lock();
        try {
            return new long[] {
                repairer.repairedListsTotal + repairer.repairedLists,
                repairer.reconnectedTotal + repairer.reconnected + certifier.reconnected,
                repairer.comparisons
            };
        } finally {
            writerGate.writeLock().unlock();
        }
    }

    @Override
    public boolean contains(int ordinal) {
        slotLock.readLock().lock();
        try {
            return ordinal >= 0
                    && ordinal < ordToSlot.length
                    && ordToSlot[ordinal] >= 0
                    && graph.isLive(ordToSlot[ordinal]);
        } finally {
            slotLock.readLock().unlock();
        }
    }

    @Override
    public int size() {
        synchronized (allocation) {
            return live;
        }
    }

    @Override
    public SearchResult search(float[] query, int k, Accept accept, SearchParams searchParams) {
        return HnswQuery.search(this, query, k, accept, searchParams);
    }

    /** The ordinal-to-slot map as last published (-1 where not live); read it with acquire. */
    int[] ordinalMap() {
        return ordToSlot;
    }

    /** A copy of the stored (prepared) vector of a live ordinal, or null. */
    public float[] vector(int ordinal) {
        slotLock.readLock().lock();
        try {
            if (ordinal < 0 || ordinal >= ordToSlot.length || ordToSlot[ordinal] < 0) {
                return null;
            }
            return graph.store().vectorCopy(ordToSlot[ordinal]);
        } finally {
            slotLock.readLock().unlock();
        }
    }

    /**
     * The neighbours of a live ordinal on a layer, as ordinals in list order; null if the ordinal
     * is not live or has no such layer. For tests and tools, not for the hot path.
     */
    public int[] neighborOrdinals(int ordinal, int level) {
        writerGate.writeLock().lock();
        try {
            if (ordinal < 0 || ordinal >= ordToSlot.length || ordToSlot[ordinal] < 0) {
                return null;
            }
            int slot = ordToSlot[ordinal];
            if (level < 0 || level > graph.level(slot)) {
                return null;
            }
            int[] nb = graph.neighbors(slot, level);
            for (int i = 0; i < nb.length; i++) {
                nb[i] = graph.ordinal(nb[i]);
            }
            return nb;
        } finally {
            writerGate.writeLock().unlock();
        }
    }

    /** The level of a live ordinal, or -1. */
    public int levelOf(int ordinal) {
        slotLock.readLock().lock();
        try {
            return ordinal < 0 || ordinal >= ordToSlot.length || ordToSlot[ordinal] < 0
                    ? -1
                    : graph.level(ordToSlot[ordinal]);
        } finally {
            slotLock.readLock().unlock();
        }
    }

    /** Levels, degrees on layer 0 and repair work, for operators and auditors. */
    @Override
    public IndexDescription describe() {
        // Writes wait, as for neighborOrdinals: a repair rewrites lists in place.
        writerGate.writeLock().lock();
        try {
            long[] repairs = repairCounts();
            Map<String, Number> stats = new TreeMap<>();
            int ep = HnswGraph.entrySlot(graph.entry());
            stats.put("levels", ep < 0 ? 0 : graph.level(ep) + 1);
            long edges = 0;
            int nodes = 0;
            for (int ord = 0; ord < ordToSlot.length; ord++) {
                if (ordToSlot[ord] >= 0) {
                    edges += graph.neighbors(ordToSlot[ord], 0).length;
                    nodes++;
                }
            }
            stats.put("meanDegreeLayer0", nodes == 0 ? 0.0 : (double) edges / nodes);
            if (graph.store().codec() != null) {
                stats.put("codeBytesPerVector", graph.store().codec().stride());
                stats.put(
                        graph.store().codesOffHeap() ? "codeBytesOffHeap" : "codeBytesOnHeap",
                        (long) graph.capacity() * graph.store().codec().stride());
            }
            // What the float vectors take, allocated capacity included, and where.
            stats.put(
                    graph.store().vectorsOffHeap() ? "vectorBytesOffHeap" : "vectorBytesOnHeap",
                    (long) graph.capacity() * dim * Float.BYTES);
            stats.put("listsRepaired", repairs[0]);
            stats.put("nodesReconnected", repairs[1]);
            stats.put("repairComparisons", repairs[2]);
            // How removals proved reachability: labels raised locally, or whole-graph walks.
            stats.put("labelsRaised", certifier.relabelled);
            stats.put("fullWalks", certifier.fullWalks);
            return new IndexDescription(KIND, nodes, stats, List.of(), null);
        } finally {
            writerGate.writeLock().unlock();
        }
    }

    /** The entry point's ordinal, or -1 when empty. */
    public int entryOrdinal() {
        slotLock.readLock().lock();
        try {
            int ep = HnswGraph.entrySlot(graph.entry());
            return ep < 0 ? -1 : graph.ordinal(ep);
        } finally {
            slotLock.readLock().unlock();
        }
    }

    @Override
    public String erasureResidual() {
        return "node and its links removed, in-neighbours re-linked in place; second-order"
                + " influence (the node steered where later inserts linked) remains until the"
                + " next rebuild";
    }

    @Override
    public IntegrityReport verifyIntegrity() {
        writerGate.writeLock().lock();
        try {
            return HnswIntegrityChecker.check(graph, ordToSlot, size());
        } finally {
            writerGate.writeLock().unlock();
        }
    }

    /**
     * Proves that the removals of {@code removedOrdinals} through this index left nothing behind,
     * checking only the slots those removals touched (see {@link ScopedRemovalCheck#check}). Cost:
     * about the removed nodes times their degree times their layers, times (degree + in-degree) for
     * the two-way list checks; it does not grow with the index. An ordinal this index holds no
     * trace for (never removed through it, removed before a load, or its trace dropped to keep the
     * traces bounded) makes the whole call run the full {@link #verifyIntegrity()} instead, which
     * proves its removal too; so does a reachability certificate an insert invalidated since the
     * last removal.
     */
    @Override
    public IntegrityReport verifyRemoval(int[] removedOrdinals) {
        writerGate.writeLock().lock();
        try {
            return traces.verify(graph, ordToSlot, size(), removedOrdinals);
        } finally {
            writerGate.writeLock().unlock();
        }
    }

    /** Test hook: the latest removal trace of an ordinal, or null. */
    RemovalTrace traceOf(int ordinal) {
        writerGate.writeLock().lock();
        try {
            return traces.latest(ordinal);
        } finally {
            writerGate.writeLock().unlock();
        }
    }

    /** Removal traces dropped so far to keep within their bounds (for tests and operators). */
    long droppedTraces() {
        writerGate.writeLock().lock();
        try {
            return traces.dropped();
        } finally {
            writerGate.writeLock().unlock();
        }
    }

    /** Test hook: the layout, so a test can break an invariant and see the checker catch it. */
    HnswGraph graph() {
        return graph;
    }

    int slotOf(int ordinal) {
        return ordinal < ordToSlot.length ? ordToSlot[ordinal] : -1;
    }

    /**
     * Loader hook ({@link HnswFile}): the ordinal map and live count of a graph just read, before
     * the index is handed out.
     */
    void restoreOrdinals(int[] ordinalToSlot, int liveCount) {
        this.ordToSlot = ordinalToSlot;
        this.live = liveCount;
    }

    /** Saves the graph in the format {@link HnswFile} describes. */
    @Override
    public void save(Path file) throws IOException {
        writerGate.writeLock().lock();
        try {
            certifyBeforeSave();
            HnswFile.write(file, this);
        } finally {
            writerGate.writeLock().unlock();
        }
    }

    @Override
    public void writeTo(DataOutputStream out) throws IOException {
        writerGate.writeLock().lock();
        try {
            certifyBeforeSave();
            HnswFile.writeTo(out, this);
        } finally {
            writerGate.writeLock().unlock();
        }
    }

    /**
     * Labels the graph if it is not (a graph built by inserts alone never was) and certifies the
     * nodes inserts left pending, so the file carries labels and the first removal after a load
     * does not walk the graph. A walk costs less than the save that writes every node, and it links
     * back any node it finds stranded, as a removal would. Caller holds the writer gate.
     */
    private void certifyBeforeSave() {
        if (!graph.labelsValid() || graph.hasPendingCertificates()) {
            certifier.certifyReachability();
        }
    }

    /**
     * Reads a file written by {@link #save}. Dimension and metric must match {@code config}; the
     * graph's own build parameters come from the file.
     */
    public static HnswIndex load(IndexConfig config, Path file) throws IOException {
        return load(config, file, Kernels.get());
    }

    /**
     * As {@link #load(IndexConfig, Path)}, scoring with {@code kernels} (for instance {@link
     * Kernels#panama(int)} at a chosen width). Every implementation gives the same scores bit for
     * bit, so the choice changes speed, never results.
     */
    public static HnswIndex load(IndexConfig config, Path file, VectorKernels kernels)
            throws IOException {
        return HnswFile.read(config, file, kernels);
    }

    /** Reads what {@link #writeTo} wrote; see {@link HnswIndexFactory#readFrom}. */
    static HnswIndex readFrom(IndexConfig config, DataInputStream in) throws IOException {
        return HnswFile.readFrom(config, in);
    }
}

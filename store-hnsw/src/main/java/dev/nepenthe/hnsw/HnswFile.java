package dev.nepenthe.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.internal.index.IndexChecks;
import dev.nepenthe.core.internal.io.BodyStreams;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The on-disk form of an {@link HnswIndex}: writes a graph and reads one back, refusing a file
 * whose structure could not have been written by {@link #writeBody}. All numbers are big-endian
 * ({@link DataOutputStream}).
 *
 * <h2>Envelope (a saved file)</h2>
 *
 * <p>{@link ChecksummedFiles} wraps the body: a header, the body below, a footer.
 *
 * <ul>
 *   <li><b>[int32]</b> magic {@code NPTH}
 *   <li><b>[int16 + UTF-8]</b> the format name, {@value HnswIndex#FORMAT}
 *   <li><b>[int32]</b> the version, {@value HnswIndex#VERSION} when written; the reader accepts
 *       {@value HnswIndex#OLDEST_VERSION} to {@value HnswIndex#VERSION}
 *   <li><b>[16 bytes]</b> a random file id
 *   <li>the body
 *   <li><b>[int32]</b> footer magic (the header magic, inverted), <b>[int64]</b> CRC32C of every
 *       byte before the footer, checked before any byte of the body is parsed
 * </ul>
 *
 * A body inside another stream ({@link HnswIndex#writeTo}) has instead a {@link
 * BodyStreams#writeHeader} header (the format name by {@code writeUTF}, then the version as an
 * int32) and no footer: the stream's owner checks it.
 *
 * <h2>Body, version 5</h2>
 *
 * <ul>
 *   <li><b>[int32]</b> dimension, <b>[int8]</b> metric ({@link Metric} ordinal); both must match
 *       the collection's
 *   <li>build parameters ({@link HnswParams}): <b>[int32]</b> M, <b>[int32]</b> efConstruction,
 *       <b>[int32]</b> efSearch, <b>[float64]</b> levelMultiplier, <b>[int32]</b> repairEf,
 *       <b>[int64]</b> seed, <b>[int8]</b> quantization (0 none, 1 int8), <b>[int32]</b> rerank.
 *       Where the vectors live (heap or not) is chosen at each open and not stored
 *   <li><b>[int32]</b> capacity (a sizing hint only), <b>[int32]</b> high-water mark {@code hw} (at
 *       most the capacity), <b>[int32]</b> entry slot (-1 when empty), <b>[int32]</b> entry level
 *   <li>per slot {@code 0 .. hw-1}:
 *       <ul>
 *         <li><b>[int8]</b> state: 0 free (nothing follows) or 1 live
 *         <li>live only: <b>[int32]</b> ordinal, <b>[int8]</b> level (at most {@value
 *             HnswGraph#MAX_LEVEL}), <b>[dim x float32]</b> the prepared vector, in a quantized
 *             graph <b>[stride bytes]</b> its {@link Int8Codes} entry, then per layer {@code 0 ..
 *             level}: <b>[int32]</b> degree (at most 2M on layer 0, M above) and <b>[degree x
 *             int32]</b> neighbour slots
 *       </ul>
 *   <li><b>[int32]</b> free-list length, <b>[length x int32]</b> the free slots, in the order they
 *       will be handed out again (last first)
 *   <li><b>[int8]</b> labelled: 1 when the reachability labels certified every live node at the
 *       save; if 1, <b>[int32]</b> per live slot in slot order: its label
 * </ul>
 *
 * <h2>Versions</h2>
 *
 * <ul>
 *   <li>1: without the quantization byte and rerank; loads as a float graph
 *   <li>2: adds quantization and rerank
 *   <li>3: adds the labels, one apart per depth
 *   <li>4: adds a quantized graph's codes (a version 3 file's codes are encoded again at load)
 *   <li>5: the same layout with labels {@link ReachabilityCertifier#LABEL_STEP} apart; a version 3
 *       or 4 file's labels still certify, but raised too many nodes per forget, so they are dropped
 *       at load and the first removal walks the graph to label it
 * </ul>
 *
 * <h2>What is not stored, and what is stored though derived</h2>
 *
 * Reverse lists are derived from the forward lists and rebuilt at load. The codes are derived too
 * (each is a function of its vector alone) but are stored, because encoding them again dominated a
 * large load's CPU for a quarter more bytes on disk; the integrity checker still recomputes every
 * code from its vector on demand. The labels are stored because making them costs a walk over layer
 * 0, which the first forget after every open would pay; the loader checks the certificate they
 * claim in one pass over the links and drops labels that do not certify. Figures:
 * docs/BENCHMARKS.md, "A restart measured as one" and "Where a forget's second went at 1M".
 */
final class HnswFile {
    private HnswFile() {}

    /** Saves {@code index} atomically; the caller holds its writer gate. */
    static void write(Path file, HnswIndex index) throws IOException {
        write(file, index, ChecksummedFiles.newFileId());
    }

    /** As {@link #write(Path, HnswIndex)} with a chosen file id (tests compare bytes). */
    static void write(Path file, HnswIndex index, byte[] fileId) throws IOException {
        ChecksummedFiles.write(
                file, HnswIndex.FORMAT, HnswIndex.VERSION, fileId, out -> writeBody(out, index));
    }

    /** The index into a stream the caller owns, its format and version first. */
    static void writeTo(DataOutputStream out, HnswIndex index) throws IOException {
        BodyStreams.writeHeader(out, HnswIndex.FORMAT, HnswIndex.VERSION);
        writeBody(out, index);
    }

    /** Reads a file written by {@link #write}; dimension and metric must match {@code config}. */
    static HnswIndex read(IndexConfig config, Path file, VectorKernels kernels) throws IOException {
        return ChecksummedFiles.read(
                file,
                HnswIndex.FORMAT,
                HnswIndex.OLDEST_VERSION,
                HnswIndex.VERSION,
                (in, version) -> readBody(config, in, version, kernels));
    }

    /** Reads what {@link #writeTo} wrote. */
    static HnswIndex readFrom(IndexConfig config, DataInputStream in) throws IOException {
        int version =
                BodyStreams.readHeader(
                        in, HnswIndex.FORMAT, HnswIndex.OLDEST_VERSION, HnswIndex.VERSION);
        return readBody(config, in, version, Kernels.get());
    }

    /** The quantization byte of the body: fixed codes, not the enum's declaration order. */
    private static int quantizationCode(HnswParams.Quantization q) {
        return switch (q) {
            case NONE -> 0;
            case INT8 -> 1;
        };
    }

    private static HnswParams.Quantization quantization(int code) {
        return switch (code) {
            case 0 -> HnswParams.Quantization.NONE;
            case 1 -> HnswParams.Quantization.INT8;
            default ->
                    throw new IllegalArgumentException(
                            "quantization code " + code + " (expected 0 for none or 1 for int8)");
        };
    }

    /** The body described above; the caller holds the index's writer gate. */
    private static void writeBody(DataOutputStream out, HnswIndex index) throws IOException {
        HnswGraph graph = index.graph();
        HnswParams params = index.params();
        int dim = index.dimension();
        IndexChecks.writeShape(out, dim, index.metric());
        out.writeInt(params.m());
        out.writeInt(params.efConstruction());
        out.writeInt(params.efSearch());
        out.writeDouble(params.levelMultiplier());
        out.writeInt(params.repairEf());
        out.writeLong(params.seed());
        out.writeByte(quantizationCode(params.quantization()));
        out.writeInt(params.rerank());
        out.writeInt(graph.capacity());
        int hw = graph.highWater();
        out.writeInt(hw);
        long entry = graph.entry();
        out.writeInt(HnswGraph.entrySlot(entry));
        out.writeInt(HnswGraph.entryLevel(entry));
        float[] v = new float[dim];
        byte[] code =
                graph.store().codec() == null ? null : new byte[graph.store().codec().stride()];
        for (int s = 0; s < hw; s++) {
            if (graph.state(s) != HnswGraph.LIVE) {
                out.writeByte(0);
                continue;
            }
            out.writeByte(1);
            out.writeInt(graph.ordinal(s));
            int level = graph.level(s);
            out.writeByte(level);
            graph.store().copyVector(s, v);
            BodyStreams.writeFloats(out, v, 0, dim);
            if (code != null) {
                graph.store().copyCode(s, code);
                out.write(code);
            }
            for (int l = 0; l <= level; l++) {
                int[] nb = graph.neighbors(s, l);
                out.writeInt(nb.length);
                BodyStreams.writeInts(out, nb, 0, nb.length);
            }
        }
        Arrays.fill(v, 0f); // the last vector copied out, not kept in a dead array
        if (code != null) {
            Arrays.fill(code, (byte) 0);
        }
        out.writeInt(graph.freeCount());
        for (int i = 0; i < graph.freeCount(); i++) {
            out.writeInt(graph.freeSlot(i));
        }
        // The writer gate is held, so no certification runs beside this: labels valid with
        // nothing pending certify every live node.
        boolean labelled = graph.labelsValid() && !graph.hasPendingCertificates();
        out.writeByte(labelled ? 1 : 0);
        if (labelled) {
            for (int s = 0; s < hw; s++) {
                if (graph.state(s) == HnswGraph.LIVE) {
                    out.writeInt(graph.label(s));
                }
            }
        }
    }

    private static HnswIndex readBody(
            IndexConfig config, DataInputStream in, int version, VectorKernels kernels)
            throws IOException {
        IndexChecks.readShape(in, config);
        int dim = config.dimension();
        Metric metric = config.metric();
        HnswParams p =
                new HnswParams(
                        in.readInt(),
                        in.readInt(),
                        in.readInt(),
                        in.readDouble(),
                        in.readInt(),
                        in.readLong());
        if (version >= 2) {
            p = p.withQuantization(quantization(in.readUnsignedByte())).withRerank(in.readInt());
        }
        // Where the vectors live is chosen at each open, not stored in the file.
        p = p.withStorage(HnswParams.storage(config));
        int capacity = in.readInt();
        int hw = in.readInt();
        if (hw < 0 || capacity < hw) {
            throw new IllegalArgumentException(
                    "high-water mark " + hw + " outside [0, capacity " + capacity + "]");
        }
        int entrySlot = in.readInt();
        int entryLevel = in.readInt();
        // The stored capacity is only a sizing hint: allocate for what the file holds, so a
        // crafted capacity cannot make the loader allocate gigabytes before anything is read.
        HnswIndex index = new HnswIndex(dim, metric, p, kernels, Math.max(16, hw));
        // Ordinals are dense in a store (freed ones are reused), so one far beyond the number
        // of slots is not something a save writes; refusing it bounds the ordinal table.
        long maxOrdinal = 16L * Math.max(hw, 1 << 16);
        HnswGraph g = index.graph();
        int[] ordToSlot = new int[16];
        Arrays.fill(ordToSlot, -1);
        float[] v = new float[dim]; // setVector copies it
        byte[] code =
                version >= 4 && g.store().codec() != null
                        ? new byte[g.store().codec().stride()]
                        : null;
        // Each list is read into one buffer and copied straight into the graph's own arrays:
        // a million lists held aside until the end of the file (as the loader once did) were
        // about 150 MB at 1M that the collector copied between generations during the open.
        // What needs every node first (each link names a node with the link's layer) is
        // checked once the file is read, over the graph's arrays.
        int[] list = new int[g.maxDegree(0)];
        int[] seen = new int[hw];
        int stamp = 0;
        int live = 0;
        for (int s = 0; s < hw; s++) {
            int state = in.readUnsignedByte();
            if (state == 0) {
                continue;
            }
            if (state != 1) {
                throw new IllegalArgumentException("slot " + s + " has unknown state " + state);
            }
            int ord = in.readInt();
            int level = in.readUnsignedByte();
            if (ord < 0 || ord > maxOrdinal || level > HnswGraph.MAX_LEVEL) {
                throw new IllegalArgumentException(
                        "slot "
                                + s
                                + ": ordinal "
                                + ord
                                + " level "
                                + level
                                + " (expected an ordinal in [0, "
                                + maxOrdinal
                                + "] and a level <= "
                                + HnswGraph.MAX_LEVEL
                                + ")");
            }
            if (ord >= ordToSlot.length) {
                int old = ordToSlot.length;
                ordToSlot = Arrays.copyOf(ordToSlot, Math.max(ord + 1, old * 2));
                Arrays.fill(ordToSlot, old, ordToSlot.length, -1);
            }
            if (ordToSlot[ord] >= 0) {
                throw new IllegalArgumentException(
                        "ordinal " + ord + " appears at slots " + ordToSlot[ord] + " and " + s);
            }
            BodyStreams.readFloats(in, v, 0, dim);
            if (code != null) {
                in.readFully(code);
            }
            g.placeNext(s);
            int got = g.allocate(ord, level);
            if (got != s) {
                throw new IllegalStateException("slot allocation out of step: " + got + " != " + s);
            }
            g.store().setVector(s, v, code);
            ordToSlot[ord] = s;
            for (int l = 0; l <= level; l++) {
                int deg = in.readInt();
                if (deg < 0 || deg > g.maxDegree(l)) {
                    throw new IllegalArgumentException(
                            "slot " + s + " layer " + l + ": degree " + deg);
                }
                BodyStreams.readInts(in, list, 0, deg);
                stamp++;
                for (int i = 0; i < deg; i++) {
                    int n = list[i];
                    if (n < 0 || n >= hw) {
                        throw new IllegalArgumentException(HnswIntegrityChecker.link(s, l, n));
                    }
                    if (n == s) {
                        throw new IllegalArgumentException(
                                "slot " + s + " layer " + l + " links to itself");
                    }
                    if (seen[n] == stamp) {
                        throw new IllegalArgumentException(
                                "slot " + s + " layer " + l + " lists slot " + n + " twice");
                    }
                    seen[n] = stamp;
                }
                g.setNeighbors(s, l, list, deg);
            }
            live++;
        }
        Arrays.fill(v, 0f);
        if (code != null) {
            Arrays.fill(code, (byte) 0);
        }
        int freeCount = in.readInt();
        if (freeCount < 0 || freeCount > hw) {
            throw new IllegalArgumentException("free list length " + freeCount);
        }
        int[] free = new int[freeCount];
        for (int i = 0; i < freeCount; i++) {
            free[i] = in.readInt();
            if (free[i] < 0 || free[i] >= hw || g.state(free[i]) != HnswGraph.FREE) {
                throw new IllegalArgumentException(
                        "free list names slot " + free[i] + " which is not free");
            }
        }
        g.placeNext(hw);
        checkLoadedStructure(g, entrySlot, entryLevel, live);
        int[] labels = null;
        if (version >= 3) {
            int labelled = in.readUnsignedByte();
            if (labelled > 1) {
                throw new IllegalArgumentException(
                        "labels flag " + labelled + " (expected 0 or 1)");
            }
            if (labelled == 1) {
                labels = seen; // the stamps are done with: reused, as large as the slots
                for (int s = 0; s < hw; s++) {
                    labels[s] = g.state(s) == HnswGraph.LIVE ? in.readInt() : 0;
                }
                if (version < 5 || !certifies(g, labels, entrySlot)) {
                    labels = null; // the first removal walks the graph and labels it, as without
                    // them
                }
            }
        }
        g.restoreSlots(hw, free);
        g.rebuildReverse();
        g.setEntry(entrySlot, entryLevel);
        if (labels != null) {
            for (int s = 0; s < hw; s++) {
                if (g.state(s) == HnswGraph.LIVE) {
                    g.setLabel(s, labels[s]);
                }
            }
            g.labelsRebuilt();
        }
        index.restoreOrdinals(ordToSlot, live);
        return index;
    }

    /**
     * The structural pass a loaded graph gets before it serves (the full integrity checker,
     * reachability included, stays on demand): every link names a live node that has the link's
     * layer, is not the node itself and appears once in its list, and the entry point is a live
     * node on the top layer.
     *
     * @throws IllegalArgumentException naming the first violation (the reader reports it as a
     *     corrupt file, naming the file)
     */
    private static void checkLoadedStructure(HnswGraph g, int entrySlot, int entryLevel, int live) {
        // What the reader could check list by list (each link in range, not the node itself,
        // not twice) it did; here every link is checked to name a node that has its layer.
        int hw = g.highWater();
        int top = -1;
        for (int s = 0; s < hw; s++) {
            if (g.state(s) != HnswGraph.LIVE) {
                continue;
            }
            int level = g.level(s);
            top = Math.max(top, level);
            for (int l = 0; l <= level; l++) {
                int[] a = g.listArray(s, l);
                int base = g.listBase(s, l);
                for (int i = 0, deg = HnswGraph.degree(a, base); i < deg; i++) {
                    int n = a[base + 1 + i];
                    if (g.level(n) < l) {
                        throw new IllegalArgumentException(
                                HnswIntegrityChecker.link(s, l, n)
                                        + (g.state(n) != HnswGraph.LIVE
                                                ? ", which holds no node"
                                                : ", whose top layer is " + g.level(n)));
                    }
                }
            }
        }
        if (live == 0) {
            if (entrySlot != -1) {
                throw new IllegalArgumentException("an empty graph names entry slot " + entrySlot);
            }
            return;
        }
        if (entrySlot < 0 || entrySlot >= hw || g.state(entrySlot) != HnswGraph.LIVE) {
            throw new IllegalArgumentException("entry point " + entrySlot + " is not a live node");
        }
        if (entryLevel != g.level(entrySlot) || entryLevel != top) {
            throw new IllegalArgumentException(
                    "entry point "
                            + entrySlot
                            + " at level "
                            + entryLevel
                            + ": its node's top"
                            + " layer is "
                            + g.level(entrySlot)
                            + " and the graph's is "
                            + top);
        }
    }

    /**
     * Whether stored labels certify that every live node is reachable on layer 0 from the entry
     * point: each live node but the entry point has a live in-neighbour with a smaller label, and
     * no label is negative, so following smaller labels ends at the entry point. One pass over the
     * links (the lists were checked to name live nodes), not a walk.
     */
    static boolean certifies(HnswGraph g, int[] labels, int entrySlot) {
        int hw = g.highWater();
        int[] smallestIn = new int[hw];
        Arrays.fill(smallestIn, Integer.MAX_VALUE);
        for (int u = 0; u < hw; u++) {
            if (g.state(u) != HnswGraph.LIVE) {
                continue;
            }
            if (labels[u] < 0) {
                return false;
            }
            int[] a = g.listArray(u, 0);
            int base = g.listBase(u, 0);
            for (int i = 0, deg = HnswGraph.degree(a, base); i < deg; i++) {
                int n = a[base + 1 + i];
                smallestIn[n] = Math.min(smallestIn[n], labels[u]);
            }
        }
        for (int s = 0; s < hw; s++) {
            if (g.state(s) == HnswGraph.LIVE && s != entrySlot && smallestIn[s] >= labels[s]) {
                return false;
            }
        }
        return true;
    }
}

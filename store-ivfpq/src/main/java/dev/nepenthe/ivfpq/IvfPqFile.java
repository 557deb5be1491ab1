package dev.nepenthe.ivfpq;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.internal.index.IndexChecks;
import dev.nepenthe.core.internal.index.SwapRemoveVectors;
import dev.nepenthe.core.internal.io.BodyStreams;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import org.roaringbitmap.RoaringBitmap;

/**
 * The on-disk form of an {@link IvfPqIndex}, inside the {@link ChecksummedFiles} envelope (format
 * {@value IvfPqIndex#FORMAT}, version {@value IvfPqIndex#VERSION}). Body, big-endian:
 *
 * <pre>
 * int dim, byte metric, long seed, long trainings
 * int nlist, m, nbits, trainSize, iterations, nprobe, rerank, byte autoRetrain, int driftLimit,
 *   byte codes (0 PQ, 1 OSQ), int bits
 * int n, then n x (int ordinal, dim x float prepared vector)
 * bitmap removed ordinals
 * byte trained; if 1:
 *   int s, s x (int ordinal, int anchor, m bytes sub-codes, none with OSQ): the surviving training members
 *   bitmap lineage, bitmap lineage members removed since training
 *   nlist x (int size, size x int ordinal, size*e bytes codes, e = m or OSQ's entry size;
 *            with OSQ and size > 0: int centre members, dim x float centre)
 * </pre>
 *
 * Bitmaps are RoaringBitmap's portable serialization preceded by its length in bytes. No sum and no
 * centroid is stored: loading recomputes every list centroid, anchor and sub-centroid as the mean
 * of its members' stored vectors, so a loaded index is exact by construction. Version 1 stored
 * codebooks without their members, which cannot forget exactly; it is refused (the store never
 * persisted IVF-PQ indexes, it rebuilds them at open).
 */
final class IvfPqFile {
    private IvfPqFile() {}

    static void write(Path file, IvfPqIndex index) throws IOException {
        ChecksummedFiles.write(
                file,
                IvfPqIndex.FORMAT,
                IvfPqIndex.VERSION,
                ChecksummedFiles.newFileId(),
                out -> writeBody(out, index));
    }

    /** The index into a stream the caller owns, its format and version first. */
    static void writeTo(DataOutputStream out, IvfPqIndex index) throws IOException {
        BodyStreams.writeHeader(out, IvfPqIndex.FORMAT, IvfPqIndex.VERSION);
        writeBody(out, index);
    }

    private static void writeBody(DataOutputStream out, IvfPqIndex index) throws IOException {
        IvfPqParams p = index.params();
        int dim = index.dimension();
        IndexChecks.writeShape(out, dim, index.metric());
        out.writeLong(index.seed());
        out.writeLong(index.trainings());
        out.writeInt(p.nlist());
        out.writeInt(p.m());
        out.writeInt(p.nbits());
        out.writeInt(p.trainSize());
        out.writeInt(p.iterations());
        out.writeInt(p.nprobe());
        out.writeInt(p.rerank());
        out.writeByte(p.autoRetrain() ? 1 : 0);
        out.writeInt(p.driftLimit());
        out.writeByte(p.codes() == IvfPqParams.Codes.OSQ ? 1 : 0);
        out.writeInt(p.bits());
        SwapRemoveVectors store = index.store();
        out.writeInt(store.size());
        float[] block = store.block();
        for (int slot = 0; slot < store.size(); slot++) {
            out.writeInt(store.ordinalAt(slot));
            int off = store.offset(slot);
            BodyStreams.writeFloats(out, block, off, dim);
        }
        writeBitmap(out, index.removedOrdinals());
        Codebooks cb = index.codebooks();
        out.writeByte(cb == null ? 0 : 1);
        if (cb == null) {
            return;
        }
        Codebooks.Members members = cb.survivingMembers();
        out.writeInt(members.ords().length);
        for (int i = 0; i < members.ords().length; i++) {
            out.writeInt(members.ords()[i]);
            out.writeInt(members.anchors()[i]);
            out.write(members.codes(), i * cb.cm, cb.cm);
        }
        writeBitmap(out, cb.lineage());
        writeBitmap(out, cb.lineageRemoved());
        for (int list = 0; list < p.nlist(); list++) {
            InvertedList il = index.list(list);
            out.writeInt(il.size());
            for (int i = 0; i < il.size(); i++) {
                out.writeInt(il.ordinalAt(i));
            }
            out.write(il.codes(), 0, il.size() * index.entryBytes());
            TrainedState st = index.trainedState();
            if (st.osq != null && il.size() > 0) {
                out.writeInt(st.centreMembers[list]);
                for (float f : st.centres[list].centroid()) {
                    out.writeFloat(f);
                }
            }
        }
    }

    static IvfPqIndex read(IndexConfig config, Path file) throws IOException {
        return ChecksummedFiles.read(
                file,
                IvfPqIndex.FORMAT,
                IvfPqIndex.VERSION,
                IvfPqIndex.VERSION,
                (in, version) -> readBody(config, in));
    }

    /** What {@link #writeTo} wrote. */
    static IvfPqIndex readFrom(IndexConfig config, DataInputStream in) throws IOException {
        BodyStreams.readHeader(in, IvfPqIndex.FORMAT, IvfPqIndex.VERSION, IvfPqIndex.VERSION);
        return readBody(config, in);
    }

    private static IvfPqIndex readBody(IndexConfig config, DataInputStream in) throws IOException {
        IndexChecks.readShape(in, config);
        int dim = config.dimension();
        Metric metric = config.metric();
        long seed = in.readLong();
        long trainings = in.readLong();
        IvfPqParams p =
                new IvfPqParams(
                        in.readInt(),
                        in.readInt(),
                        in.readInt(),
                        in.readInt(),
                        in.readInt(),
                        in.readInt(),
                        in.readInt(),
                        in.readUnsignedByte() == 1,
                        in.readInt(),
                        readCodes(in),
                        in.readInt());
        if (p.nlist() < 1 || p.m() < 1 || dim % p.m() != 0 || p.nbits() < 1 || p.nbits() > 8) {
            throw new IllegalArgumentException(
                    "parameters " + p + " are invalid for dimension " + dim);
        }
        IvfPqIndex index = new IvfPqIndex(dim, metric, p, seed);
        int n = in.readInt();
        if (n < 0) {
            throw new IllegalArgumentException("vector count " + n + " is negative");
        }
        float[] v = new float[dim];
        for (int i = 0; i < n; i++) {
            int ord = in.readInt();
            BodyStreams.readFloats(in, v, 0, dim);
            if (ord < 0 || index.store().contains(ord)) {
                throw new IllegalArgumentException(
                        "ordinal " + ord + " at slot " + i + " is invalid or repeated");
            }
            index.store().add(ord, v);
        }
        RoaringBitmap removed = readBitmap(in);
        boolean trained = in.readUnsignedByte() == 1;
        if (!trained) {
            index.installLoaded(trainings, removed, null, null, null, null, null);
            return index;
        }
        int s = in.readInt();
        if (s < 0 || s > n) {
            throw new IllegalArgumentException(
                    "training member count " + s + " is impossible for " + n + " vectors");
        }
        int[] memberOrds = new int[s];
        int[] memberAnchors = new int[s];
        int cm = p.codes() == IvfPqParams.Codes.PQ ? p.m() : 0;
        byte[] memberCodes = new byte[s * cm];
        for (int i = 0; i < s; i++) {
            memberOrds[i] = in.readInt();
            memberAnchors[i] = in.readInt();
            in.readFully(memberCodes, i * cm, cm);
        }
        RoaringBitmap lineage = readBitmap(in);
        RoaringBitmap lineageRemoved = readBitmap(in);
        int[][] ords = new int[p.nlist()][];
        byte[][] codes = new byte[p.nlist()][];
        float[][] centres = new float[p.nlist()][];
        int[] centreMembers = new int[p.nlist()];
        for (int list = 0; list < p.nlist(); list++) {
            int size = in.readInt();
            if (size < 0 || size > n) {
                throw new IllegalArgumentException(
                        "list " + list + " size " + size + " is impossible for " + n + " vectors");
            }
            ords[list] = new int[size];
            for (int i = 0; i < size; i++) {
                ords[list][i] = in.readInt();
            }
            codes[list] = new byte[size * index.entryBytes()];
            in.readFully(codes[list]);
            if (p.codes() == IvfPqParams.Codes.OSQ && size > 0) {
                centreMembers[list] = in.readInt();
                if (centreMembers[list] < 1 || centreMembers[list] > size) {
                    throw new IllegalArgumentException(
                            "list "
                                    + list
                                    + " has a centre of "
                                    + centreMembers[list]
                                    + " members, expected 1 to its "
                                    + size
                                    + " entries");
                }
                centres[list] = new float[dim];
                for (int d = 0; d < dim; d++) {
                    centres[list][d] = in.readFloat();
                }
            }
        }
        if (!RoaringBitmap.andNot(RoaringBitmap.bitmapOf(memberOrds), lineage).isEmpty()) {
            throw new IllegalArgumentException("training members outside the recorded lineage");
        }
        Codebooks cb =
                Codebooks.fromMembers(
                        index.kernels(),
                        metric,
                        p,
                        dim,
                        index.store(),
                        memberOrds,
                        memberAnchors,
                        memberCodes);
        cb.markRemoved(lineageRemoved);
        index.installLoaded(trainings, removed, cb, ords, codes, centres, centreMembers);
        return index;
    }

    private static IvfPqParams.Codes readCodes(DataInputStream in) throws IOException {
        int c = in.readUnsignedByte();
        return switch (c) {
            case 0 -> IvfPqParams.Codes.PQ;
            case 1 -> IvfPqParams.Codes.OSQ;
            default ->
                    throw new IllegalArgumentException(
                            "code type " + c + ": expected 0 (PQ) or 1 (OSQ)");
        };
    }

    private static void writeBitmap(DataOutputStream out, RoaringBitmap live) throws IOException {
        RoaringBitmap bitmap =
                live.clone(); // saves run under the read lock: never mutate the index's own
        bitmap.runOptimize();
        out.writeInt(bitmap.serializedSizeInBytes());
        bitmap.serialize(out);
    }

    private static RoaringBitmap readBitmap(DataInputStream in) throws IOException {
        int bytes = in.readInt();
        if (bytes < 0) {
            throw new IllegalArgumentException("bitmap length " + bytes + " is negative");
        }
        byte[] raw = new byte[bytes];
        in.readFully(raw);
        RoaringBitmap bitmap = new RoaringBitmap();
        bitmap.deserialize(new DataInputStream(new ByteArrayInputStream(raw)));
        return bitmap;
    }
}

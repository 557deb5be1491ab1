package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.CrashPoints;
import dev.nepenthe.core.internal.io.IoErrors;
import dev.nepenthe.core.internal.io.TestPoints;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Map;
import java.util.TreeMap;

/**
 * The commit point of a collection's storage: which segment file holds each bucket, the first
 * write-ahead-log generation not yet folded into segments, and the counters to resume from. Written
 * atomically (temporary file, fsync, rename, directory fsync) at each checkpoint.
 *
 * @param segments bucket -> segment file name (buckets with no records are absent)
 */
record Manifest(
        int buckets,
        long nextSeq,
        int nextOrdinal,
        long walGeneration,
        long nextSegmentId,
        Map<Integer, String> segments) {

    static final String FILE = "MANIFEST";
    static final String FORMAT = "nepenthe-manifest";
    static final int VERSION = 1;

    Manifest {
        segments = Map.copyOf(segments);
    }

    static Manifest empty(int buckets) {
        return new Manifest(buckets, 1, 0, 1, 1, Map.of());
    }

    void write(Path dir) throws IOException {
        write(dir, CrashPoints.bound());
    }

    /** Writes this manifest into {@code dir}, reporting crash points to the store's points. */
    void write(Path dir, TestPoints points) throws IOException {
        ChecksummedFiles.write(
                dir.resolve(FILE),
                FORMAT,
                VERSION,
                out -> {
                    out.writeInt(buckets);
                    out.writeLong(nextSeq);
                    out.writeInt(nextOrdinal);
                    out.writeLong(walGeneration);
                    out.writeLong(nextSegmentId);
                    Map<Integer, String> sorted = new TreeMap<>(segments);
                    out.writeInt(sorted.size());
                    for (Map.Entry<Integer, String> e : sorted.entrySet()) {
                        out.writeInt(e.getKey());
                        out.writeUTF(e.getValue());
                    }
                },
                points);
    }

    /** SHA-256 of the manifest file's bytes in {@code dir}, or null when there is none. */
    static byte[] digest(Path dir) throws IOException {
        Path f = dir.resolve(FILE);
        if (!Files.exists(f)) {
            return null;
        }
        try {
            return MessageDigest.getInstance("SHA-256").digest(IoErrors.readAllBytes(f));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static Manifest read(Path dir) throws IOException {
        return ChecksummedFiles.read(
                dir.resolve(FILE),
                FORMAT,
                VERSION,
                VERSION,
                (in, v) -> {
                    int buckets = in.readInt();
                    long nextSeq = in.readLong();
                    int nextOrdinal = in.readInt();
                    long walGen = in.readLong();
                    long nextSegment = in.readLong();
                    int n = in.readInt();
                    Map<Integer, String> segs = new TreeMap<>();
                    for (int i = 0; i < n; i++) {
                        int b = in.readInt();
                        String name = in.readUTF();
                        if (b < 0 || b >= buckets || !name.matches("b\\d{4}-\\d{12}\\.seg")) {
                            throw new IllegalArgumentException(
                                    "bad segment entry: bucket " + b + " of " + buckets);
                        }
                        segs.put(b, name);
                    }
                    return new Manifest(buckets, nextSeq, nextOrdinal, walGen, nextSegment, segs);
                });
    }
}

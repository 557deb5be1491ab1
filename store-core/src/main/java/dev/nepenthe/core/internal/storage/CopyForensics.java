package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.ForensicScan;
import dev.nepenthe.core.internal.io.IoErrors;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Finds and removes copies of deleted records by their keyed hashes, which every sealed copy
 * carries in clear: byte scans of a collection's live files or of a snapshot copy of them, and the
 * rewrite of a snapshot copy without them. Nothing is decrypted, so a copy is found whether or not
 * its key still exists and whether or not its file still parses.
 */
final class CopyForensics {
    private CopyForensics() {}

    /** See {@link CollectionStorage#scanForCopies}. */
    static CollectionStorage.Residue scanLive(
            Path dir,
            StoreContext ctx,
            String collectionId,
            Manifest manifest,
            LiveRecords live,
            List<VectorRecord> deleted)
            throws IOException {
        List<byte[]> needles = new ArrayList<>(deleted.size());
        Set<Path> files = new TreeSet<>();
        for (VectorRecord r : deleted) {
            needles.add(ctx.hashes().record(r.tenant(), r.id()).bytes());
            KeyedHash.Hash scope = ctx.scopeHash(collectionId, r.tenant(), r.subject());
            String seg = manifest.segments().get(live.bucketIndex(scope));
            if (seg != null) {
                files.add(dir.resolve("segments").resolve(seg));
            }
        }
        if (needles.isEmpty()) {
            return new CollectionStorage.Residue(0, List.of(), 0);
        }
        try (DirectoryStream<Path> wals = Files.newDirectoryStream(dir.resolve("wal"))) {
            wals.forEach(files::add);
        }
        return scan(dir, files, needles);
    }

    /** Occurrences of {@code needles} in each of {@code files} that is a regular file. */
    private static CollectionStorage.Residue scan(
            Path dir, Collection<Path> files, List<byte[]> needles) throws IOException {
        long found = 0;
        List<String> holding = new ArrayList<>();
        int scanned = 0;
        for (Path f : files) {
            if (!Files.isRegularFile(f)) {
                continue;
            }
            scanned++;
            int n = ForensicScan.countAny(IoErrors.readAllBytes(f), needles);
            if (n > 0) {
                found += n;
                holding.add(dir.relativize(f).toString());
            }
        }
        return new CollectionStorage.Residue(found, holding, scanned);
    }

    /** See {@link CollectionStorage#purgeSnapshotCopy}. */
    static int purgeSnapshotCopy(Path snapshotDir, Set<KeyedHash.Hash> recordHashes)
            throws IOException {
        if (!Files.exists(snapshotDir.resolve(Manifest.FILE))) {
            return 0;
        }
        for (Path p :
                List.of(
                        snapshotDir,
                        snapshotDir.resolve("segments"),
                        snapshotDir.resolve(Manifest.FILE))) {
            if (Files.isSymbolicLink(p)) {
                // A rewrite through a link would write wherever it points.
                throw new IllegalStateException(
                        "snapshot copy "
                                + snapshotDir
                                + ": "
                                + p.getFileName()
                                + " is a symbolic link; expected the folder and files a snapshot"
                                + " writes");
            }
        }
        Manifest m = Manifest.read(snapshotDir);
        Map<Integer, String> segments = new HashMap<>(m.segments());
        List<String> superseded = new ArrayList<>();
        long nextSegment = m.nextSegmentId();
        int removed = 0;
        for (Map.Entry<Integer, String> e : m.segments().entrySet()) {
            Path f = snapshotDir.resolve("segments").resolve(e.getValue());
            List<SealedRecord> records = SegmentFiles.read(f, e.getKey());
            List<SealedRecord> kept =
                    records.stream().filter(r -> !recordHashes.contains(r.record())).toList();
            if (kept.size() == records.size()) {
                continue;
            }
            removed += records.size() - kept.size();
            superseded.add(e.getValue());
            if (kept.isEmpty()) {
                segments.remove(e.getKey());
                continue;
            }
            String name = SegmentFiles.name(e.getKey(), nextSegment++);
            SegmentFiles.write(snapshotDir.resolve("segments").resolve(name), e.getKey(), kept);
            segments.put(e.getKey(), name);
        }
        if (removed == 0) {
            return 0;
        }
        ChecksummedFiles.fsyncDirectory(snapshotDir.resolve("segments"));
        new Manifest(
                        m.buckets(),
                        m.nextSeq(),
                        m.nextOrdinal(),
                        m.walGeneration(),
                        nextSegment,
                        segments)
                .write(snapshotDir);
        for (String old : superseded) {
            Files.deleteIfExists(snapshotDir.resolve("segments").resolve(old));
        }
        ChecksummedFiles.fsyncDirectory(snapshotDir.resolve("segments"));
        return removed;
    }

    /** See {@link CollectionStorage#scanSnapshotCopy}. */
    static long scanSnapshotCopy(Path snapshotDir, List<byte[]> recordHashes) throws IOException {
        long found = 0;
        if (!Files.isDirectory(snapshotDir) || recordHashes.isEmpty()) {
            return 0;
        }
        try (Stream<Path> files = Files.walk(snapshotDir)) {
            // Regular files only, never through a link: the scan reads the copy, not what a link
            // names.
            for (Path f :
                    files.filter(f -> Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)).toList()) {
                found += ForensicScan.countAny(IoErrors.readAllBytes(f), recordHashes);
            }
        }
        return found;
    }
}

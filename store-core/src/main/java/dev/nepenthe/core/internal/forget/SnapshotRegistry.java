package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import dev.nepenthe.core.internal.io.IoErrors;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32;

/**
 * The snapshots this store wrote, so that a forget can purge its records from them too (the
 * "snapshots" surface). One line per collection copy in {@code snapshots.registry} in the keystore
 * folder. Paths and versions only, nothing of anyone.
 *
 * <p>Line format 2 (written now), tab-separated: {@code 2}, the snapshot folder and the
 * collection's name (each escaped: a backslash as {@code \\}, a control character such as a newline
 * or a tab as {@code \}{@code uXXXX}), the incarnation id, the version below which the copy holds
 * every record, and the CRC-32 (hex) of the line before its last tab. So a path with a newline in
 * it cannot forge a line of its own, and a torn or edited line is seen, not read. Format 1 (older
 * stores): the path, name, id and version, unescaped; still read. A line that reads as neither is
 * counted and reported by {@link #verify}, never guessed at.
 */
final class SnapshotRegistry {

    private record RegisteredSnapshot(
            int line, Path folder, String collection, String collectionId, long nextVersion) {}

    private record Lines(List<RegisteredSnapshot> snapshots, int unreadable) {}

    private final Path file;
    private final KeyedHash hashes;

    SnapshotRegistry(Path file, KeyedHash hashes) {
        this.file = file;
        this.hashes = hashes;
    }

    void register(Path target, CollectionEngine c) throws IOException {
        String line =
                line(target.toAbsolutePath().normalize(), c.name(), c.id(), c.nextVersion()) + "\n";
        synchronized (this) {
            Files.writeString(
                    file,
                    line,
                    StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND,
                    StandardOpenOption.SYNC);
        }
    }

    /** One registry line in format 2, without its line break. */
    static String line(Path folder, String collection, String collectionId, long nextVersion) {
        String body =
                "2\t"
                        + escape(folder.toString())
                        + "\t"
                        + escape(collection)
                        + "\t"
                        + escape(collectionId)
                        + "\t"
                        + nextVersion;
        return body + "\t" + crc(body);
    }

    static String escape(String s) {
        StringBuilder b = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch == '\\') {
                b.append("\\\\");
            } else if (ch < 0x20
                    || ch == 0x7f
                    || ch == '\u2028'
                    || ch == '\u2029'
                    || ch == '\u0085') {
                b.append(String.format("\\u%04x", (int) ch));
            } else {
                b.append(ch);
            }
        }
        return b.toString();
    }

    static String unescape(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch != '\\') {
                b.append(ch);
            } else if (i + 1 < s.length() && s.charAt(i + 1) == '\\') {
                b.append('\\');
                i++;
            } else if (i + 5 < s.length() && s.charAt(i + 1) == 'u') {
                b.append((char) Integer.parseInt(s.substring(i + 2, i + 6), 16));
                i += 5;
            } else {
                throw new IllegalArgumentException("a lone backslash at " + i);
            }
        }
        return b.toString();
    }

    private static String crc(String body) {
        CRC32 c = new CRC32();
        c.update(body.getBytes(StandardCharsets.UTF_8));
        return String.format("%08x", c.getValue());
    }

    /**
     * A line in either format, or null if it reads as neither (torn, damaged or forged). Its path
     * is one of {@code fs}, the registry's own file system.
     */
    private static RegisteredSnapshot parse(FileSystem fs, int number, String line) {
        String[] f = line.split("\t", -1);
        try {
            if (f.length == 6 && f[0].equals("2")) {
                int last = line.lastIndexOf('\t');
                if (!crc(line.substring(0, last)).equals(f[5])) {
                    return null;
                }
                return new RegisteredSnapshot(
                        number,
                        fs.getPath(unescape(f[1])),
                        unescape(f[2]),
                        unescape(f[3]),
                        Long.parseLong(f[4]));
            }
            // Format 1: written only with absolute paths, so its first field never reads "2".
            if (f.length == 4 && fs.getPath(f[0]).isAbsolute()) {
                return new RegisteredSnapshot(
                        number, fs.getPath(f[0]), f[1], f[2], Long.parseLong(f[3]));
            }
        } catch (IllegalArgumentException e) { // a bad number, escape or path
            return null;
        }
        return null;
    }

    private synchronized Lines registered() throws IOException {
        if (!Files.exists(file)) {
            return new Lines(List.of(), 0);
        }
        List<RegisteredSnapshot> out = new ArrayList<>();
        int unreadable = 0;
        List<String> lines = IoErrors.readString(file, StandardCharsets.UTF_8).lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).isEmpty()) {
                continue;
            }
            RegisteredSnapshot s = parse(file.getFileSystem(), i + 1, lines.get(i));
            if (s == null) {
                unreadable++;
            } else {
                out.add(s);
            }
        }
        return new Lines(out, unreadable);
    }

    /** A registered copy of one collection: its registry line (what problems cite) and folder. */
    private record Copy(int line, Path dir) {}

    private record Targets(Map<Copy, Set<KeyedHash.Hash>> copies, int unreadable) {}

    /**
     * The registered copies of live collections that may hold a removed record, with the records'
     * keyed hashes.
     */
    private Targets targets(
            String tenant,
            List<OperationSecret.Forgotten> removed,
            List<CollectionEngine> collections)
            throws IOException {
        Map<String, CollectionEngine> live = new HashMap<>();
        collections.forEach(c -> live.put(c.name(), c));
        Map<Copy, Set<KeyedHash.Hash>> targets = new LinkedHashMap<>();
        Lines lines = registered();
        for (RegisteredSnapshot s : lines.snapshots()) {
            CollectionEngine c = live.get(s.collection());
            if (c == null || !c.id().equals(s.collectionId())) {
                continue;
            }
            Copy copy =
                    new Copy(s.line(), s.folder().resolve("collections").resolve(s.collection()));
            for (OperationSecret.Forgotten f : removed) {
                if (f.collection().equals(s.collection())
                        && f.removed().version() < s.nextVersion()) {
                    targets.computeIfAbsent(copy, k -> new HashSet<>())
                            .add(hashes.record(tenant, f.removed().record().id()));
                }
            }
        }
        return new Targets(targets, lines.unreadable());
    }

    /**
     * Rewrites every registered copy that holds a removed record without it; returns how many were
     * removed.
     */
    int purge(
            String tenant,
            List<OperationSecret.Forgotten> removed,
            List<CollectionEngine> collections)
            throws IOException {
        int n = 0;
        for (Map.Entry<Copy, Set<KeyedHash.Hash>> t :
                targets(tenant, removed, collections).copies().entrySet()) {
            if (Files.isDirectory(t.getKey().dir(), LinkOption.NOFOLLOW_LINKS)) {
                try {
                    n += CollectionStorage.purgeSnapshotCopy(t.getKey().dir(), t.getValue());
                } catch (NoSuchFileException e) {
                    // Deleted, or being deleted, while the purge read it (an operator rotating old
                    // snapshots): a copy no longer where it was written, not a failed write of the
                    // store's own files. Verify scans what is left of it, or counts it missing.
                }
            }
        }
        return n;
    }

    /**
     * A byte scan of every registered copy that held a removed record. Problems cite a copy by its
     * registry line, never by its path: a tenant reads them, and the server's folders are the
     * operator's business (the line in {@code snapshots.registry} names the folder).
     */
    SurfaceOutcome verify(
            String tenant,
            List<OperationSecret.Forgotten> removed,
            List<CollectionEngine> collections,
            long purged)
            throws IOException {
        List<String> problems = new ArrayList<>();
        int scanned = 0;
        int missing = 0;
        Targets targets = targets(tenant, removed, collections);
        for (Map.Entry<Copy, Set<KeyedHash.Hash>> t : targets.copies().entrySet()) {
            if (!Files.isDirectory(t.getKey().dir(), LinkOption.NOFOLLOW_LINKS)) {
                missing++;
                continue;
            }
            long found;
            try {
                found =
                        CollectionStorage.scanSnapshotCopy(
                                t.getKey().dir(),
                                t.getValue().stream().map(KeyedHash.Hash::bytes).toList());
            } catch (NoSuchFileException | UncheckedIOException e) {
                if (e instanceof UncheckedIOException u
                        && !(u.getCause() instanceof NoSuchFileException)) {
                    throw u;
                }
                missing++; // deleted while the scan read it, as purge may have found
                continue;
            }
            scanned++;
            if (found > 0) {
                problems.add(
                        found
                                + " copies of forgotten records in the snapshot copy on line "
                                + t.getKey().line()
                                + " of snapshots.registry");
            }
        }
        List<String> residual = new ArrayList<>();
        if (missing > 0) {
            residual.add(
                    missing
                            + " registered snapshot copies are no longer where they were written"
                            + " (moved or deleted); if restored, the tombstone journal drops the"
                            + " forgotten records before serving");
        }
        if (targets.unreadable() > 0) {
            residual.add(
                    targets.unreadable()
                            + " lines of snapshots.registry do not read (torn, damaged or edited);"
                            + " the snapshots they name were not purged, and if restored, the"
                            + " tombstone journal drops the forgotten records before serving");
        }
        return new SurfaceOutcome(
                "snapshots",
                ErasureClass.PHYSICAL,
                purged,
                scanned,
                problems,
                residual.isEmpty() ? null : String.join("; ", residual));
    }
}

package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.FileCopies;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The store folder's own files: each collection's {@code collection.meta} (its spec and random
 * incarnation id, written once and renamed into place: the commit point of a creation), the copy a
 * restore makes of a snapshot, and the removal of a collection's folder.
 */
public final class StoreFolders {

    static final String COLLECTION_FORMAT = "nepenthe-collection";

    /**
     * 2 added the provenance policy; 3 the text analyzer and embedder; 4 the subject identifier
     * keys; older ones still read.
     */
    static final int COLLECTION_VERSION = 4;

    /** A count read back from a file is bounded before anything is sized by it. */
    private static final int MAX_STORED_IDENTIFIER_KEYS = CollectionSpec.MAX_SUBJECT_IDENTIFIERS;

    private StoreFolders() {}

    /** A collection's spec and its random incarnation id (keys and tombstones are scoped by it). */
    public record Meta(CollectionSpec spec, String id) {}

    public static void writeMeta(Path file, CollectionSpec spec, String id) throws IOException {
        ChecksummedFiles.write(
                file,
                COLLECTION_FORMAT,
                COLLECTION_VERSION,
                ChecksummedFiles.newFileId(),
                out -> {
                    out.writeUTF(id);
                    out.writeUTF(spec.name());
                    out.writeInt(spec.dimension());
                    out.writeUTF(spec.metric().name());
                    out.writeUTF(spec.index().kind());
                    out.writeUTF(spec.provenance().name());
                    Map<String, String> params = new TreeMap<>(spec.index().params());
                    out.writeInt(params.size());
                    for (Map.Entry<String, String> e : params.entrySet()) {
                        out.writeUTF(e.getKey());
                        out.writeUTF(e.getValue());
                    }
                    out.writeUTF(spec.textAnalyzer() == null ? "" : spec.textAnalyzer());
                    out.writeUTF(spec.embedder() == null ? "" : spec.embedder());
                    out.writeInt(spec.subjectIdentifiers().size());
                    for (String key : spec.subjectIdentifiers()) {
                        out.writeUTF(key);
                    }
                });
    }

    /** Reads a collection.meta, failing loudly (naming the file) when it is damaged. */
    public static Meta readMeta(Path file) throws IOException {
        return ChecksummedFiles.read(
                file,
                COLLECTION_FORMAT,
                1,
                COLLECTION_VERSION,
                (in, v) -> {
                    String id = in.readUTF();
                    String name = in.readUTF();
                    int dim = in.readInt();
                    Metric metric = Metric.valueOf(in.readUTF());
                    String kind = in.readUTF();
                    CollectionSpec.Provenance provenance =
                            v >= 2
                                    ? CollectionSpec.Provenance.valueOf(in.readUTF())
                                    : CollectionSpec.Provenance.CASCADE;
                    int n = in.readInt();
                    Map<String, String> params = new HashMap<>();
                    for (int i = 0; i < n; i++) {
                        params.put(in.readUTF(), in.readUTF());
                    }
                    String analyzer = v >= 3 ? in.readUTF() : "";
                    String embedder = v >= 3 ? in.readUTF() : "";
                    List<String> identifierKeys = new ArrayList<>();
                    if (v >= 4) {
                        int k = in.readInt();
                        if (k < 0 || k > MAX_STORED_IDENTIFIER_KEYS) {
                            throw new IllegalArgumentException(
                                    "subject identifier keys: expected 0 to "
                                            + MAX_STORED_IDENTIFIER_KEYS
                                            + ", got "
                                            + k);
                        }
                        for (int i = 0; i < k; i++) {
                            identifierKeys.add(in.readUTF());
                        }
                    }
                    return new Meta(
                            new CollectionSpec(
                                    name,
                                    dim,
                                    metric,
                                    IndexSpec.of(kind, params),
                                    provenance,
                                    analyzer.isEmpty() ? null : analyzer,
                                    embedder.isEmpty() ? null : embedder,
                                    identifierKeys),
                            id);
                });
    }

    /**
     * Copies a snapshot into {@code folder}, which must be absent or empty. The snapshot folder
     * itself may be reached through a symbolic link (the caller named it); anything inside it that
     * is not a plain folder or a regular file (a symbolic link above all) is refused before
     * anything is copied, so a planted link can never make a restore copy what it points to.
     */
    public static void copySnapshot(Path snapshot, Path folder) throws IOException {
        if (!Files.isDirectory(snapshot.resolve("collections"))) {
            throw new IllegalArgumentException(
                    "restore source "
                            + snapshot
                            + ": expected a snapshot folder with a"
                            + " 'collections' folder, found none");
        }
        Path source = snapshot.toRealPath();
        if (Files.exists(folder, LinkOption.NOFOLLOW_LINKS)) {
            try (Stream<Path> s = Files.list(folder)) {
                if (s.findAny().isPresent()) {
                    throw new IllegalArgumentException(
                            "restore target "
                                    + folder
                                    + " is not empty; expected an empty or missing folder (close"
                                    + " the store and move its folder away first)");
                }
            }
        }
        List<Path> entries;
        try (Stream<Path> files = Files.walk(source)) {
            entries = files.toList();
        }
        for (Path src : entries) {
            BasicFileAttributes a =
                    Files.readAttributes(src, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isDirectory() && !a.isRegularFile()) {
                throw new IllegalArgumentException(
                        "restore source "
                                + snapshot
                                + ": '"
                                + source.relativize(src)
                                + "' is "
                                + (a.isSymbolicLink() ? "a symbolic link" : "not a regular file")
                                + "; expected only folders and regular files (a snapshot never"
                                + " holds links)");
            }
        }
        for (Path src : entries) {
            Path dst = folder.resolve(source.relativize(src).toString());
            if (Files.isDirectory(src, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectories(dst);
            } else {
                FileCopies.copyRegularFile(src, dst);
            }
        }
    }

    /** A collection folder holding nothing but, at most, the meta file's temporary copy. */
    public static boolean isUnfinishedCreation(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.allMatch(f -> f.getFileName().toString().equals("collection.meta.tmp"));
        }
    }

    /** Deletes a folder and everything in it. */
    public static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}

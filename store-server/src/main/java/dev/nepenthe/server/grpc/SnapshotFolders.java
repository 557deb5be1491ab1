package dev.nepenthe.server.grpc;

import io.grpc.Status;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The folders a server may write snapshots into and restore from and into, as the operator set them
 * ({@code serve --snapshot-dir}). A path a caller sends is judged by its real path ({@link
 * Path#toRealPath}, every link resolved), never by its spelling, so neither {@code ..} nor a
 * symbolic link gets a snapshot or a restore outside these folders. With none configured, snapshots
 * and restores over gRPC are refused.
 *
 * <p>A folder here must be writable by the server's user only: a checked path is used at once, but
 * someone who can write inside one could still swap a folder for a link in between.
 */
final class SnapshotFolders {

    static final String OPTION = "--snapshot-dir";

    private final List<Path> roots;

    private SnapshotFolders(List<Path> roots) {
        this.roots = List.copyOf(roots);
    }

    /** None: snapshots and restores over gRPC are refused. */
    static SnapshotFolders none() {
        return new SnapshotFolders(List.of());
    }

    /**
     * The configured folders, created if missing, by their real paths. None may hold or lie inside
     * the served data folder or the keystore folder: a snapshot written into either, or a restore
     * read from either, would mix a copy with the live files or the keys.
     *
     * @throws IllegalArgumentException naming the folder that overlaps
     */
    static SnapshotFolders of(List<Path> configured, Path dataFolder, Path keysFolder)
            throws IOException {
        List<Path> roots = new ArrayList<>();
        Path data = dataFolder.toRealPath();
        Path keys = keysFolder.toRealPath();
        for (Path p : configured) {
            Files.createDirectories(p);
            Path real = p.toRealPath();
            if (!Files.isDirectory(real)) {
                throw new IllegalArgumentException(
                        OPTION + " " + p + ": expected a folder, got a file");
            }
            requireApart(p, real, data, "the served data folder");
            requireApart(p, real, keys, "the keystore folder");
            roots.add(real);
        }
        return new SnapshotFolders(roots);
    }

    private static void requireApart(Path given, Path real, Path served, String what) {
        if (real.startsWith(served) || served.startsWith(real)) {
            throw new IllegalArgumentException(
                    OPTION
                            + " "
                            + given
                            + ": expected a folder apart from "
                            + what
                            + " ("
                            + served
                            + "), got one "
                            + (real.startsWith(served) ? "inside it" : "holding it"));
        }
    }

    List<Path> roots() {
        return roots;
    }

    /**
     * A new folder to write a snapshot (or a restore) into: absent, its parent inside a configured
     * folder.
     */
    Path newFolder(String requested, String field) throws IOException {
        Path p = requested(requested, field);
        Path parent;
        try {
            parent = p.getParent().toRealPath();
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException(
                    field + ": expected a path whose parent folder exists, got " + p);
        }
        Path target = parent.resolve(p.getFileName().toString());
        requireInside(target, field, p);
        if (Files.isSymbolicLink(target)) {
            // Writing through it would land wherever it points.
            throw new IllegalArgumentException(
                    field + ": expected a new folder, got " + p + ", a symbolic link");
        }
        return target;
    }

    /**
     * An existing snapshot folder to restore from: by its real path, inside a configured folder.
     */
    Path existingFolder(String requested, String field) throws IOException {
        Path p = requested(requested, field);
        Path real;
        try {
            real = p.toRealPath();
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException(
                    field
                            + ": expected an existing snapshot folder, got "
                            + p
                            + ", which does not exist");
        }
        requireInside(real, field, p);
        return real;
    }

    private Path requested(String requested, String field) {
        if (roots.isEmpty()) {
            throw Status.FAILED_PRECONDITION
                    .withDescription(
                            "snapshots and restores over gRPC are off: this server was"
                                    + " started without "
                                    + OPTION
                                    + " (the folders they may use); start it with "
                                    + OPTION
                                    + " DIR")
                    .asRuntimeException();
        }
        if (requested.isBlank()) {
            throw new IllegalArgumentException(field + ": expected a folder path, got none");
        }
        Path p;
        try {
            p = Path.of(requested);
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException(
                    field
                            + ": expected a folder path, got one the file system refuses ("
                            + e.getReason()
                            + ")");
        }
        if (!p.isAbsolute()) {
            throw new IllegalArgumentException(
                    field + ": expected an absolute path, got '" + requested + "'");
        }
        p = p.normalize();
        if (p.getParent() == null) {
            throw new IllegalArgumentException(
                    field + ": expected a folder inside " + describeRoots() + ", got " + p);
        }
        return p;
    }

    private void requireInside(Path real, String field, Path asGiven) {
        for (Path root : roots) {
            if (real.startsWith(root) && !real.equals(root)) {
                return;
            }
        }
        throw new IllegalArgumentException(
                field
                        + ": expected a folder inside "
                        + describeRoots()
                        + ", got "
                        + asGiven
                        + (real.equals(asGiven) ? "" : " (really " + real + ")"));
    }

    private String describeRoots() {
        return roots.size() == 1 ? roots.get(0).toString() : "one of " + roots;
    }
}

package dev.nepenthe.cluster.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Files searched byte by byte for byte strings (a forgotten vector's little-endian floats): how a
 * replica proves that what it forgot is gone from its Raft and journal folders, and how the demo
 * and the tests show it for every folder of a replica. A file removed while the scan runs (a
 * segment rolled or destroyed) is skipped.
 */
public final class ByteScan {

    private ByteScan() {}

    /**
     * The position, in {@code needles}, of the first one the file holds.
     *
     * @param file the file
     * @param needles the byte strings sought
     * @return the needle's position, or empty when the file holds none (or is gone)
     * @throws IOException if the file cannot be read
     */
    public static Optional<Integer> holds(Path file, List<byte[]> needles) throws IOException {
        if (needles.isEmpty()) {
            return Optional.empty();
        }
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readAllBytes();
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        for (int n = 0; n < needles.size(); n++) {
            if (indexOf(bytes, needles.get(n)) >= 0) {
                return Optional.of(n);
            }
        }
        return Optional.empty();
    }

    /**
     * The files under a folder (every depth) that hold any of the byte strings.
     *
     * @param root the folder; none when it does not exist
     * @param needles the byte strings sought
     * @return the files, in no particular order
     * @throws IOException if the folder cannot be walked or a file read
     */
    public static List<Path> holding(Path root, List<byte[]> needles) throws IOException {
        List<Path> out = new ArrayList<>();
        for (Path f : files(root)) {
            if (holds(f, needles).isPresent()) {
                out.add(f);
            }
        }
        return out;
    }

    /**
     * Every regular file under a folder, sorted; none when it does not exist. A file or folder
     * removed while the walk runs (Ratis renames its open segment when it rolls one) is skipped, as
     * {@link #holds} skips one removed before it is read.
     */
    static List<Path> files(Path root) throws IOException {
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        List<Path> out = new ArrayList<>();
        Files.walkFileTree(
                root,
                new SimpleFileVisitor<>() {
                    @Override
                    public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                        if (attrs.isRegularFile()) {
                            out.add(file);
                        }
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFileFailed(Path file, IOException e)
                            throws IOException {
                        if (e instanceof NoSuchFileException) {
                            return FileVisitResult.CONTINUE;
                        }
                        throw e;
                    }

                    @Override
                    public FileVisitResult postVisitDirectory(Path dir, IOException e)
                            throws IOException {
                        if (e != null && !(e instanceof NoSuchFileException)) {
                            throw e;
                        }
                        return FileVisitResult.CONTINUE;
                    }
                });
        out.sort(null);
        return out;
    }

    /**
     * Where a byte string first stands in another.
     *
     * @param hay the bytes searched
     * @param needle the bytes sought
     * @return the first position, or -1
     */
    public static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}

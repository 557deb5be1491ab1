package dev.nepenthe.cluster.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Removes a folder a replica no longer needs (the store an installed copy replaced, a copy that
 * failed half-way) by overwriting each file with zeros, forcing it, then deleting it: the replaced
 * keystore held keys of subjects the group may have forgotten since, and a plain delete would leave
 * them on the disk's free blocks. Links are deleted, never followed.
 */
final class Shred {

    private static final int BLOCK = 1 << 16;

    private Shred() {}

    /** Shreds {@code root} and everything under it; nothing when it does not exist. */
    static void tree(Path root) throws IOException {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.walkFileTree(
                root,
                new SimpleFileVisitor<>() {
                    @Override
                    public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                            throws IOException {
                        if (attrs.isRegularFile()) {
                            zero(file, attrs.size());
                        }
                        Files.delete(file);
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult postVisitDirectory(Path dir, IOException e)
                            throws IOException {
                        if (e != null) {
                            throw e;
                        }
                        Files.delete(dir);
                        return FileVisitResult.CONTINUE;
                    }
                });
        Path parent = root.toAbsolutePath().getParent();
        if (parent != null) {
            Durable.forceDirectory(parent);
        }
    }

    private static void zero(Path file, long size) throws IOException {
        try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ByteBuffer zeros = ByteBuffer.allocate(BLOCK);
            for (long at = 0; at < size; ) {
                zeros.clear();
                zeros.limit((int) Math.min(BLOCK, size - at));
                at += c.write(zeros, at);
            }
            c.force(true);
        }
    }
}

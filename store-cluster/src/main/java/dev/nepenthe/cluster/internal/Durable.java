package dev.nepenthe.cluster.internal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Small files written whole and durably: to a sibling, forced, moved over the old one, the folder
 * forced. A failed force is thrown, never retried.
 */
final class Durable {

    private Durable() {}

    static void write(Path file, String text) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".new");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        force(tmp);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        forceDirectory(file.getParent());
    }

    static void force(Path file) throws IOException {
        try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE)) {
            c.force(true);
        }
    }

    static void forceDirectory(Path dir) throws IOException {
        try (FileChannel c = FileChannel.open(dir, StandardOpenOption.READ)) {
            c.force(true);
        }
    }
}

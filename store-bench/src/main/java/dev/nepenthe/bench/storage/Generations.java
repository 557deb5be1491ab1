package dev.nepenthe.bench.storage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The index generation files of a store folder: what a checkpoint writes and a forget destroys,
 * which the open benchmark counts, sizes and waits to see gone.
 */
final class Generations {

    private Generations() {}

    /** Whether the generation files are gone within 30 seconds. */
    static boolean generationsGone(Path dir) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!generations(dir).isEmpty()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    static List<Path> generations(Path dir) throws IOException {
        Path collections = dir.resolve("data").resolve("collections");
        if (!Files.exists(collections)) {
            return List.of();
        }
        try (Stream<Path> s = Files.walk(collections)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".idx")).toList();
        }
    }

    static long size(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

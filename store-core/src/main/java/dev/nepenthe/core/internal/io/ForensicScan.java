package dev.nepenthe.core.internal.io;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Searches every byte of every file under some folders for byte strings: how tests, the demo
 * and an operator show that something is not on disk (and, with a planted control, that the
 * search would have found it). Reads whole files; meant for data folders, not terabytes.
 */
public final class ForensicScan {
    private ForensicScan() {}

    /** Files (regular files under the roots, or the roots themselves) containing any needle. */
    public static List<Path> filesContaining(List<Path> roots, List<byte[]> needles) throws IOException {
        List<Path> hits = new ArrayList<>();
        for (Path root : roots) {
            if (!Files.exists(root)) {
                continue;
            }
            try (Stream<Path> files = Files.walk(root)) {
                for (Path f : files.filter(Files::isRegularFile).toList()) {
                    byte[] bytes = Files.readAllBytes(f);
                    for (byte[] n : needles) {
                        if (indexOf(bytes, n) >= 0) {
                            hits.add(f);
                            break;
                        }
                    }
                }
            }
        }
        return hits;
    }

    /** First index of {@code needle} in {@code hay}, or -1. */
    public static int indexOf(byte[] hay, byte[] needle) {
        if (needle.length == 0) {
            return 0;
        }
        byte first = needle[0];
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            if (hay[i] != first) {
                continue;
            }
            for (int j = 1; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /**
     * How many times any of {@code needles} (each at least 4 bytes: 32-byte keyed hashes, or the
     * terms of a text index) occurs at any offset of {@code hay}. One pass over the bytes with a
     * lookup of the 8 bytes at each offset (4 when a needle is shorter than 8), so thousands of
     * needles cost about what one does.
     */
    public static int countAny(byte[] hay, java.util.Collection<byte[]> needles) {
        int shortest = Integer.MAX_VALUE;
        for (byte[] n : needles) {
            shortest = Math.min(shortest, n.length);
        }
        // The prefix every needle has: 8 bytes when all are that long, else 4 (terms of a text
        // index are often 4 to 7 bytes; the verify phase scans for them after a forget).
        return count(hay, needles, shortest >= 8 ? 8 : 4);
    }

    private static final java.lang.invoke.VarHandle LONGS =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.BIG_ENDIAN);
    private static final java.lang.invoke.VarHandle INTS =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(int[].class, java.nio.ByteOrder.BIG_ENDIAN);

    private static long prefix(byte[] b, int at, int length) {
        return length == 8 ? (long) LONGS.get(b, at) : (int) INTS.get(b, at) & 0xFFFFFFFFL;
    }

    private static int count(byte[] hay, java.util.Collection<byte[]> needles, int p) {
        java.util.Map<Long, List<byte[]>> byPrefix = new java.util.HashMap<>();
        for (byte[] n : needles) {
            if (n.length < p) {
                throw new IllegalArgumentException("needle: expected at least " + p + " bytes, got " + n.length);
            }
            byPrefix.computeIfAbsent(prefix(n, 0, p), k -> new ArrayList<>()).add(n);
        }
        int count = 0;
        for (int i = 0; i + p <= hay.length; i++) {
            List<byte[]> candidates = byPrefix.get(prefix(hay, i, p));
            if (candidates == null) {
                continue;
            }
            for (byte[] n : candidates) {
                if (i + n.length <= hay.length
                        && java.util.Arrays.equals(hay, i, i + n.length, n, 0, n.length)) {
                    count++;
                    break;
                }
            }
        }
        return count;
    }
}

package dev.nepenthe.core.internal.io;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.stream.Stream;

/**
 * Searches every byte of every file under some folders for byte strings: how tests, the demo and an
 * operator show that something is not on disk (and, with a planted control, that the search would
 * have found it). Reads whole files; meant for data folders, not terabytes.
 */
public final class ForensicScan {
    private ForensicScan() {}

    /** Files (regular files under the roots, or the roots themselves) containing any needle. */
    public static List<Path> filesContaining(List<Path> roots, List<byte[]> needles)
            throws IOException {
        List<Path> hits = new ArrayList<>();
        for (Path root : roots) {
            if (!Files.exists(root)) {
                continue;
            }
            try (Stream<Path> files = Files.walk(root)) {
                for (Path f : files.filter(Files::isRegularFile).toList()) {
                    byte[] bytes = IoErrors.readAllBytes(f);
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
     * How many offsets of {@code hay} hold any of {@code needles} (each at least 4 bytes: 32-byte
     * keyed hashes, or the terms of a text index). One pass over the bytes keeps the 8 bytes ending
     * at each offset in a register (4 when a needle is shorter than 8) and tests them against a bit
     * filter of the needles' prefixes; only a filter hit looks the prefix up and compares whole
     * needles. So thousands of needles cost about what one does, and the loop allocates nothing: a
     * forget's verify phase scans a segment of several megabytes with it, often before the JIT has
     * seen the loop.
     */
    public static int countAny(byte[] hay, Collection<byte[]> needles) {
        if (needles.isEmpty()) {
            return 0;
        }
        int shortest = Integer.MAX_VALUE;
        for (byte[] n : needles) {
            shortest = Math.min(shortest, n.length);
        }
        // The prefix every needle has: 8 bytes when all are that long, else 4 (terms of a text
        // index are often 4 to 7 bytes; the verify phase scans for them after a forget).
        return new Prefixes(needles, shortest >= 8 ? 8 : 4).count(hay);
    }

    /**
     * The needles grouped by their first {@code width} bytes, with a bit filter over those
     * prefixes.
     */
    private static final class Prefixes {
        private final int width;
        private final long mask;

        /**
         * Distinct prefixes, sorted; the needles with prefix {@code keys[k]} are {@code
         * byKey[from[k]..from[k+1])}.
         */
        private final long[] keys;

        private final int[] from;
        private final byte[][] byKey;
        private final long[] filter;
        private final int shift;

        Prefixes(Collection<byte[]> needles, int width) {
            this.width = width;
            this.mask = width == 8 ? -1L : 0xFFFFFFFFL;
            byte[][] sorted = needles.toArray(new byte[0][]);
            for (byte[] n : sorted) {
                if (n.length < width) {
                    throw new IllegalArgumentException(
                            "needle: expected at least " + width + " bytes, got " + n.length);
                }
            }
            Arrays.sort(sorted, (a, b) -> Long.compare(prefix(a), prefix(b)));
            long[] distinct = new long[sorted.length];
            int[] starts = new int[sorted.length + 1];
            int k = 0;
            for (int i = 0; i < sorted.length; i++) {
                long p = prefix(sorted[i]);
                if (k == 0 || distinct[k - 1] != p) {
                    distinct[k] = p;
                    starts[k++] = i;
                }
            }
            starts[k] = sorted.length;
            this.keys = Arrays.copyOf(distinct, k);
            this.from = Arrays.copyOf(starts, k + 1);
            this.byKey = sorted;
            // About 256 filter bits per prefix (so one offset in a few hundred reaches the
            // lookup), between 2^12 and 2^24 bits.
            int bits = Math.max(12, Math.min(24, 64 - Long.numberOfLeadingZeros(k) + 8));
            this.shift = 64 - bits;
            this.filter = new long[1 << (bits - 6)];
            for (long p : keys) {
                int h = slot(p);
                filter[h >>> 6] |= 1L << h;
            }
        }

        private long prefix(byte[] b) {
            long p = 0;
            for (int i = 0; i < width; i++) {
                p = (p << 8) | (b[i] & 0xFF);
            }
            return p;
        }

        private int slot(long prefix) {
            return (int) ((prefix * 0x9E3779B97F4A7C15L) >>> shift);
        }

        int count(byte[] hay) {
            if (hay.length < width) {
                return 0;
            }
            long window = 0;
            for (int i = 0; i < width - 1; i++) {
                window = (window << 8) | (hay[i] & 0xFF);
            }
            int count = 0;
            for (int end = width - 1; end < hay.length; end++) {
                window = ((window << 8) | (hay[end] & 0xFF)) & mask;
                int h = slot(window);
                if ((filter[h >>> 6] & (1L << h)) != 0 && matchesAt(hay, end - width + 1, window)) {
                    count++;
                }
            }
            return count;
        }

        private boolean matchesAt(byte[] hay, int at, long window) {
            int k = Arrays.binarySearch(keys, window);
            if (k < 0) {
                return false;
            }
            for (int i = from[k]; i < from[k + 1]; i++) {
                byte[] n = byKey[i];
                if (at + n.length <= hay.length
                        && Arrays.equals(hay, at, at + n.length, n, 0, n.length)) {
                    return true;
                }
            }
            return false;
        }
    }
}

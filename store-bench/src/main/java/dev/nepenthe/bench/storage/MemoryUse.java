package dev.nepenthe.bench.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The open benchmark's memory figures: the Java heap in use after a collection, and the process's
 * resident set, which counts the off-heap vectors and mapped files the heap does not.
 */
final class MemoryUse {

    private MemoryUse() {}

    static double heapUsedMb() {
        System.gc();
        Runtime rt = Runtime.getRuntime();
        return (rt.totalMemory() - rt.freeMemory()) / 1e6;
    }

    /**
     * Lets this JVM give back what the closed store held before a new JVM opens it, as a restart's
     * old process would have: the native vectors and codes are unmapped only once the collector
     * finds them unreachable, and until then the child opened with gigabytes fewer free and paid
     * for reclaiming page cache (docs/BENCHMARKS.md, "Huge pages for the vectors and the heap").
     * Collects, then waits up to 10 s for the resident set to stop falling; returns it.
     */
    static double releaseMemory() throws InterruptedException {
        double before = Double.MAX_VALUE;
        double now = rssMb();
        for (int i = 0; i < 20 && !Double.isNaN(now) && now < before - 16; i++) {
            System.gc();
            Thread.sleep(500);
            before = now;
            now = rssMb();
        }
        return now;
    }

    /** The resident set from /proc (Linux), or NaN elsewhere. */
    static double rssMb() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1e3;
                }
            }
        } catch (IOException | NumberFormatException e) {
            // not Linux
        }
        return Double.NaN;
    }
}

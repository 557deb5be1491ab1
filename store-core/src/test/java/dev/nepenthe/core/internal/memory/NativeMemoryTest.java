package dev.nepenthe.core.internal.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

class NativeMemoryTest {

    private static final boolean LINUX =
            System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux");

    /** Without it, madvise refuses the advice and the region is an ordinary mapping. */
    private static final boolean THP =
            Files.exists(Path.of("/sys/kernel/mm/transparent_hugepage/enabled"));

    /**
     * The tests run with native access (the root pom's flags), so on Linux the mapped path must be
     * there.
     */
    @Test
    void theMappedPathIsThereWhereTheTestsRun() {
        String arch = System.getProperty("os.arch", "");
        assumeTrue(
                LINUX && (arch.equals("amd64") || arch.equals("aarch64")),
                "Linux on x86-64 or arm64 only");
        assertTrue(
                NativeMemory.class.getModule().isNativeAccessEnabled(),
                "the tests run with --enable-native-access");
        assertTrue(NativeMemory.mapsHugePages(), "mmap, munmap and madvise were found");
    }

    @Test
    void aLargeRegionIsZeroedWritableAlignedAndAdvisedForHugePages() throws IOException {
        assumeTrue(NativeMemory.mapsHugePages(), "the mapped path only");
        assumeTrue(THP, "a kernel with transparent huge pages");
        long bytes = 5 * NativeMemory.HUGE_PAGE + 12;
        MemorySegment region = NativeMemory.allocate(bytes);
        assertEquals(bytes, region.byteSize());
        assertEquals(
                0, region.address() % NativeMemory.HUGE_PAGE, "starts on a huge-page boundary");
        for (long off = 0; off < bytes; off++) {
            if (region.get(ValueLayout.JAVA_BYTE, off) != 0) {
                throw new AssertionError("byte " + off + " of a new region is not zero");
            }
        }
        region.set(ValueLayout.JAVA_INT_UNALIGNED, 0, 0x5eed);
        region.set(ValueLayout.JAVA_INT_UNALIGNED, bytes - 4, 0xfeed);
        assertEquals(0x5eed, region.get(ValueLayout.JAVA_INT_UNALIGNED, 0));
        assertEquals(0xfeed, region.get(ValueLayout.JAVA_INT_UNALIGNED, bytes - 4));
        assertTrue(
                advisedHuge(region.address()),
                "the region's mapping carries the huge-page advice (VmFlags hg)");

        // The control: the same size from an arena is not advised, so the check above can fail.
        MemorySegment plain = Arena.ofAuto().allocate(bytes, 64);
        assertFalse(advisedHuge(plain.address()), "an arena's region carries no huge-page advice");
    }

    @Test
    void aSmallRegionComesZeroedFromAnArena() {
        MemorySegment region = NativeMemory.allocate(1000);
        assertEquals(1000, region.byteSize());
        assertEquals(0, region.address() % 64);
        for (long off = 0; off < 1000; off++) {
            assertEquals(0, region.get(ValueLayout.JAVA_BYTE, off), "byte " + off);
        }
    }

    @Test
    void anUnreachableRegionIsUnmapped() throws Exception {
        assumeTrue(NativeMemory.mapsHugePages(), "the mapped path only");
        assumeTrue(THP, "a kernel with transparent huge pages");
        long address = touchAndDrop();
        long deadline = System.nanoTime() + 60_000_000_000L;
        // Another mapping may take the address once it is free, but none without this advice.
        while (advisedHuge(address)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        "the region at 0x"
                                + Long.toHexString(address)
                                + " is still mapped a minute after it became unreachable");
            }
            System.gc();
            Thread.sleep(50);
        }
    }

    private static long touchAndDrop() throws IOException {
        MemorySegment region = NativeMemory.allocate(3 * NativeMemory.HUGE_PAGE);
        region.set(ValueLayout.JAVA_BYTE, 0, (byte) 1);
        long address = region.address();
        assertTrue(advisedHuge(address), "mapped and advised while reachable");
        return address;
    }

    /** Whether the mapping that holds {@code address} exists and has the huge-page advice. */
    private static boolean advisedHuge(long address) throws IOException {
        List<String> lines = Files.readAllLines(Path.of("/proc/self/smaps"));
        boolean inside = false;
        for (String line : lines) {
            int dash = line.indexOf('-');
            int space = line.indexOf(' ');
            if (dash > 0
                    && space > dash
                    && line.substring(0, dash).chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
                long start = Long.parseUnsignedLong(line.substring(0, dash), 16);
                long end = Long.parseUnsignedLong(line.substring(dash + 1, space), 16);
                inside =
                        Long.compareUnsigned(address, start) >= 0
                                && Long.compareUnsigned(address, end) < 0;
            } else if (inside && line.startsWith("VmFlags:")) {
                return List.of(line.substring("VmFlags:".length()).trim().split(" "))
                        .contains("hg");
            }
        }
        return false;
    }
}

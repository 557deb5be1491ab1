package dev.nepenthe.core.internal.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Locale;

/**
 * Large zeroed native regions for vectors and codes, released by the collector once unreachable (an
 * automatic arena), backed by transparent huge pages where the system offers them.
 *
 * <p>Why: an open of a million 384-d vectors first-touches gigabytes (the record column, the
 * graph's floats and codes). In 4 KiB pages that is hundreds of thousands of page faults, most of
 * the open's system time on a virtual machine; {@link Arena#allocate} also zeroes every page in
 * user space before the caller writes it. An anonymous mapping is zeroed by the kernel as it is
 * touched, and {@code madvise(MADV_HUGEPAGE)} asks for 2 MiB pages, 512 times fewer faults, and
 * fewer TLB misses for a search's random reads. Linux with transparent huge pages in {@code
 * madvise} mode (the common default) grants them only to regions that ask.
 *
 * <p>The mapped path needs native access for this code's module ({@code
 * --enable-native-access=ALL-UNNAMED}, which the launcher and the tests pass). Without it, off
 * Linux, below {@link #HUGE_PAGE} bytes or if a call fails, the region comes from {@link
 * Arena#allocate} as before: same contents, same lifetime, ordinary pages.
 */
public final class NativeMemory {

    /** A transparent huge page on x86-64 and arm64 Linux (with 4 KiB base pages). */
    public static final long HUGE_PAGE = 2L << 20;

    private static final int PROT_READ = 1;
    private static final int PROT_WRITE = 2;
    private static final int MAP_PRIVATE = 0x02;
    private static final int MAP_ANONYMOUS = 0x20;
    private static final int MADV_HUGEPAGE = 14;

    private static final Calls CALLS = Calls.find();

    private NativeMemory() {}

    /**
     * A zeroed region of {@code bytes}, aligned to at least 64 bytes, freed when the returned
     * segment (and every slice of it) is unreachable.
     */
    public static MemorySegment allocate(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("expected a size of at least 0 bytes, got " + bytes);
        }
        if (CALLS != null && bytes >= HUGE_PAGE) {
            MemorySegment mapped = CALLS.map(bytes);
            if (mapped != null) {
                return mapped;
            }
        }
        return Arena.ofAuto().allocate(bytes, 64);
    }

    /**
     * Whether regions of {@link #HUGE_PAGE} bytes and more are mapped and advised (see the class
     * comment).
     */
    public static boolean mapsHugePages() {
        return CALLS != null;
    }

    /** The three system calls, or null where they cannot be made. */
    private record Calls(MethodHandle mmap, MethodHandle munmap, MethodHandle madvise) {

        // Restricted on purpose: libc's mmap, munmap and madvise, found only where native access
        // is enabled for this module (checked first).
        @SuppressWarnings("restricted")
        static Calls find() {
            String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
            String arch = System.getProperty("os.arch", "");
            // The flag values above are Linux's on these two; other systems number them otherwise.
            if (!os.startsWith("linux")
                    || !(arch.equals("amd64") || arch.equals("aarch64"))
                    || !NativeMemory.class.getModule().isNativeAccessEnabled()) {
                return null;
            }
            try {
                Linker linker = Linker.nativeLinker();
                SymbolLookup libc = linker.defaultLookup();
                return new Calls(
                        linker.downcallHandle(
                                libc.find("mmap").orElseThrow(),
                                FunctionDescriptor.of(
                                        ValueLayout.JAVA_LONG,
                                        ValueLayout.JAVA_LONG,
                                        ValueLayout.JAVA_LONG,
                                        ValueLayout.JAVA_INT,
                                        ValueLayout.JAVA_INT,
                                        ValueLayout.JAVA_INT,
                                        ValueLayout.JAVA_LONG)),
                        linker.downcallHandle(
                                libc.find("munmap").orElseThrow(),
                                FunctionDescriptor.of(
                                        ValueLayout.JAVA_INT,
                                        ValueLayout.JAVA_LONG,
                                        ValueLayout.JAVA_LONG)),
                        linker.downcallHandle(
                                libc.find("madvise").orElseThrow(),
                                FunctionDescriptor.of(
                                        ValueLayout.JAVA_INT,
                                        ValueLayout.JAVA_LONG,
                                        ValueLayout.JAVA_LONG,
                                        ValueLayout.JAVA_INT)));
            } catch (RuntimeException e) {
                return null;
            }
        }

        /**
         * Maps {@code bytes} rounded up to whole huge pages at a huge-page boundary (the kernel
         * backs only aligned 2 MiB spans with a huge page), or returns null.
         */
        // Restricted on purpose: the segment's size is the mapping's, made just above.
        @SuppressWarnings("restricted")
        MemorySegment map(long bytes) {
            long length = Math.ceilDiv(bytes, HUGE_PAGE) * HUGE_PAGE;
            try {
                // One huge page more than needed, then the unaligned head and the tail unmapped.
                long over =
                        (long)
                                mmap.invokeExact(
                                        0L,
                                        length + HUGE_PAGE,
                                        PROT_READ | PROT_WRITE,
                                        MAP_PRIVATE | MAP_ANONYMOUS,
                                        -1,
                                        0L);
                if (over == -1L) {
                    return null;
                }
                long start = Math.ceilDiv(over, HUGE_PAGE) * HUGE_PAGE;
                long head = start - over;
                long tail = HUGE_PAGE - head;
                if (head > 0) {
                    int _ = (int) munmap.invokeExact(over, head);
                }
                if (tail > 0) {
                    int _ = (int) munmap.invokeExact(start + length, tail);
                }
                // Advice refused (huge pages switched off) leaves an ordinary zeroed mapping: still
                // fine.
                int _ = (int) madvise.invokeExact(start, length, MADV_HUGEPAGE);
                MethodHandle unmap = munmap;
                return MemorySegment.ofAddress(start)
                        .reinterpret(
                                bytes,
                                Arena.ofAuto(),
                                _ -> {
                                    try {
                                        int _ = (int) unmap.invokeExact(start, length);
                                    } catch (Throwable e) {
                                        throw new IllegalStateException(
                                                "munmap of " + length + " bytes failed", e);
                                    }
                                });
            } catch (Throwable e) {
                return null;
            }
        }
    }
}

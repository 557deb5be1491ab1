package dev.nepenthe.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The machine line the harnesses print above their tables: cores, CPU model and the vector
 * flags that decide which kernels run, the JVM, and our kernels' choice. Read from local files
 * only ({@code /proc/cpuinfo}); where that is missing the line says so rather than guess.
 */
public final class Machine {

    /** The CPU flags worth naming: they decide SIMD widths in our kernels, Lucene's and ONNX Runtime's. */
    private static final List<String> FLAGS = List.of("avx2", "fma", "avx512f", "avx512_vnni", "amx_tile", "asimd", "sve");

    private Machine() {}

    /** One line: cores, CPU model and flags, JVM, our kernels. */
    public static String describe() {
        return Runtime.getRuntime().availableProcessors() + " cores (shared), " + cpu() + ", "
                + System.getProperty("java.vm.name") + " " + System.getProperty("java.version") + ", kernels "
                + dev.nepenthe.core.vector.Kernels.get().name();
    }

    /** The one-minute load average, or -1 where the OS does not report one. */
    public static double loadAverage() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    /** The first CPU's model name and which of {@link #FLAGS} it has, from /proc/cpuinfo. */
    static String cpu() {
        List<String> lines;
        try {
            lines = Files.readAllLines(Path.of("/proc/cpuinfo"));
        } catch (IOException | RuntimeException e) {
            return "CPU model unknown (no /proc/cpuinfo)";
        }
        String model = null;
        Set<String> flags = Set.of();
        for (String line : lines) {
            int colon = line.indexOf(':');
            if (colon < 0) {
                continue;
            }
            String key = line.substring(0, colon).trim();
            String value = line.substring(colon + 1).trim();
            if (model == null && (key.equals("model name") || key.equals("Model"))) {
                model = value;
            } else if (flags.isEmpty() && (key.equals("flags") || key.equals("Features"))) {
                flags = Set.of(value.split("\\s+"));
            }
        }
        List<String> have = new ArrayList<>();
        for (String f : FLAGS) {
            if (flags.contains(f)) {
                have.add(f);
            }
        }
        return (model == null ? "CPU model unknown" : model) + " [" + (have.isEmpty() ? "no AVX2/AVX-512/NEON flags"
                : String.join(" ", have)) + "]";
    }
}

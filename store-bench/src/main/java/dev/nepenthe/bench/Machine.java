package dev.nepenthe.bench;

import dev.nepenthe.core.vector.Kernels;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
import org.apache.lucene.util.VectorUtil;

/**
 * The machine line the harnesses print above their tables: cores, CPU model and the vector flags
 * that decide which kernels run, the JVM, the Vector API's preferred width, our kernels' choice and
 * Lucene's. Read from local files only ({@code /proc/cpuinfo}); where that is missing the line says
 * so rather than guess.
 *
 * <p>Lucene decides once per process whether to use the Vector API and at what width, and says so
 * only in one java.util.logging record (from {@code org.apache.lucene.internal.vectorization}) when
 * its first vector code runs; it offers no public getter. This class listens on that logger and
 * makes Lucene decide when it is first loaded, so a harness that prints this line before touching
 * Lucene shows Lucene's own words (its width, or why it fell back to scalar code).
 */
public final class Machine {

    /**
     * The CPU flags worth naming: they decide SIMD widths in our kernels, Lucene's and ONNX
     * Runtime's.
     */
    private static final List<String> FLAGS =
            List.of("avx2", "fma", "avx512f", "avx512_vnni", "amx_tile", "asimd", "sve");

    /**
     * Lucene's vectorization loggers live under this name; held here so the listener is not
     * collected.
     */
    private static final Logger LUCENE_VECTORIZATION =
            Logger.getLogger("org.apache.lucene.internal.vectorization");

    private static final String LUCENE_CHOICE = luceneVectorization();

    private Machine() {}

    /**
     * One line: cores, CPU model and flags, JVM, Vector API width, our kernels, Lucene's
     * vectorization.
     */
    public static String describe() {
        return Runtime.getRuntime().availableProcessors()
                + " cores (shared), "
                + cpu()
                + ", "
                + System.getProperty("java.vm.name")
                + " "
                + System.getProperty("java.version")
                + ", "
                + vectorApiWidth()
                + ", kernels "
                + Kernels.get().name()
                + ", Lucene: "
                + LUCENE_CHOICE;
    }

    /**
     * The Vector API's preferred shape on this JVM and CPU, or why there is none. Read
     * reflectively: a direct reference would fail to link when the JVM was started without {@code
     * --add-modules jdk.incubator.vector}.
     */
    static String vectorApiWidth() {
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
            return "Vector API absent (no --add-modules jdk.incubator.vector)";
        }
        try {
            Object shape =
                    Class.forName("jdk.incubator.vector.VectorShape")
                            .getMethod("preferredShape")
                            .invoke(null);
            return "Vector API preferred "
                    + shape.getClass().getMethod("vectorBitSize").invoke(shape)
                    + " bits";
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "Vector API preferred width unknown (" + e + ")";
        }
    }

    /**
     * Makes Lucene choose its vector implementation while listening on its logger, and returns what
     * it said ("Java vector incubator API enabled; uses preferredBitSize=256; FMA enabled", or the
     * reason it fell back to scalar code). The listener stays, so a later record is kept too; the
     * first one is returned.
     */
    private static String luceneVectorization() {
        List<String> said = new CopyOnWriteArrayList<>();
        // Lucene says what it chose at INFO; keep that level here even where the root logger is
        // quieter.
        LUCENE_VECTORIZATION.setLevel(Level.INFO);
        LUCENE_VECTORIZATION.addHandler(
                new Handler() {
                    @Override
                    public void publish(LogRecord r) {
                        said.add(r.getLevel() + " " + new SimpleFormatter().formatMessage(r));
                    }

                    @Override
                    public void flush() {}

                    @Override
                    public void close() {}
                });
        try {
            // VectorUtil is a public entry point that makes Lucene pick its provider once.
            VectorUtil.dotProduct(new float[] {1f}, new float[] {1f});
        } catch (RuntimeException | LinkageError e) {
            return "vectorization unknown (" + e + ")";
        }
        if (said.isEmpty()) {
            return "vectorization chosen before this harness listened (Lucene's start-up line is on"
                    + " stderr)";
        }
        return said.get(0).replaceFirst("^INFO ", "");
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
        return (model == null ? "CPU model unknown" : model)
                + " ["
                + (have.isEmpty() ? "no AVX2/AVX-512/NEON flags" : String.join(" ", have))
                + "]";
    }
}

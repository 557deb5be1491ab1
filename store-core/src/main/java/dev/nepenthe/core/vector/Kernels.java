package dev.nepenthe.core.vector;

import dev.nepenthe.core.internal.vector.PanamaKernels;
import dev.nepenthe.core.internal.vector.ScalarKernels;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Locale;

/**
 * Chooses the {@link VectorKernels} implementation once per process.
 *
 * <p>The system property {@value #PROPERTY} forces a choice: {@code scalar}, {@code panama} (the
 * Vector API at the CPU's widest native width) or {@code panama-256} / {@code panama-512} (the
 * Vector API at that width, see {@link #panama(int)}). Unset, the Vector API is used when the
 * {@code jdk.incubator.vector} module is readable (the JVM was started with {@code --add-modules
 * jdk.incubator.vector}); otherwise the reason is logged once and the scalar kernels are used.
 * Forcing {@code panama} when the module is missing fails at start-up rather than silently running
 * scalar code.
 */
public final class Kernels {

    /**
     * System property that forces the implementation: {@code scalar}, {@code panama}, {@code
     * panama-256} or {@code panama-512}.
     */
    public static final String PROPERTY = "nepenthe.kernels";

    private static final String MODULE_MISSING =
            "module jdk.incubator.vector is not in the boot layer"
                    + " (start the JVM with --add-modules jdk.incubator.vector)";
    private static final Logger LOG = System.getLogger(Kernels.class.getName());
    private static final VectorKernels SCALAR = new ScalarKernels();
    private static final VectorKernels CHOSEN = choose();

    private Kernels() {}

    /**
     * The implementation chosen for this process, when this class was first loaded. A {@value
     * #PROPERTY} that names neither implementation, or names {@code panama} without the module,
     * makes that first use fail with {@link ExceptionInInitializerError}.
     *
     * @return the kernels; the same object on every call
     */
    public static VectorKernels get() {
        return CHOSEN;
    }

    /**
     * The scalar implementation, always available (tests compare the two).
     *
     * @return the scalar kernels
     */
    public static VectorKernels scalar() {
        return SCALAR;
    }

    /**
     * The Vector API implementation.
     *
     * @return the Vector API kernels
     * @throws IllegalStateException if {@code jdk.incubator.vector} is not readable
     */
    public static VectorKernels panama() {
        String why = panamaUnavailableReason();
        if (why != null) {
            throw new IllegalStateException("Vector API kernels unavailable: " + why);
        }
        return PanamaHolder.INSTANCE;
    }

    /**
     * The Vector API implementation with its ordered sums at a chosen width, so a machine with
     * 512-bit vectors can measure its 256-bit speed too (what an AVX2 machine would run). Same
     * results bit for bit at either width.
     *
     * @param vectorBits 256 or 512
     * @return the kernels; the same object for the same width
     * @throws IllegalStateException if {@code jdk.incubator.vector} is not readable
     * @throws IllegalArgumentException if the width is neither 256 nor 512, or wider than this
     *     CPU's
     */
    public static VectorKernels panama(int vectorBits) {
        String why = panamaUnavailableReason();
        if (why != null) {
            throw new IllegalStateException("Vector API kernels unavailable: " + why);
        }
        return PanamaHolder.ofWidth(vectorBits);
    }

    /**
     * The widths {@link #panama(int)} accepts on this machine, widest first; empty without the
     * Vector API or on CPUs with neither width (they run the scalar order).
     *
     * @return 512 and 256, or 256 alone, or nothing
     */
    public static int[] panamaWidths() {
        if (panamaUnavailableReason() != null) {
            return new int[0];
        }
        int widest = ((PanamaKernels) PanamaHolder.INSTANCE).vectorBits();
        return widest >= 512 ? new int[] {512, 256} : widest == 256 ? new int[] {256} : new int[0];
    }

    private static VectorKernels choose() {
        String why = panamaUnavailableReason();
        VectorKernels chosen = choose(System.getProperty(PROPERTY), why == null);
        if (chosen == SCALAR && why != null) {
            LOG.log(Level.WARNING, "Using scalar vector kernels: {0}", why);
        }
        return chosen;
    }

    /**
     * The choice itself, apart from the process-wide singleton so tests can exercise every branch.
     *
     * @param forced the value of {@value #PROPERTY}, or null when unset
     * @param moduleAvailable whether {@code jdk.incubator.vector} is readable
     * @throws IllegalArgumentException if {@code forced} is neither blank, {@code scalar} nor
     *     {@code panama}
     * @throws IllegalStateException if {@code panama} is forced but the module is missing
     */
    static VectorKernels choose(String forced, boolean moduleAvailable) {
        String value = forced == null ? "" : forced.trim().toLowerCase(Locale.ROOT);
        return switch (value) {
            case "scalar" -> SCALAR;
            case "panama" -> {
                if (!moduleAvailable) {
                    throw new IllegalStateException(
                            "system property "
                                    + PROPERTY
                                    + "=panama but the Vector API"
                                    + " kernels are unavailable: "
                                    + MODULE_MISSING);
                }
                yield PanamaHolder.INSTANCE;
            }
            case "panama-256", "panama-512" -> {
                if (!moduleAvailable) {
                    throw new IllegalStateException(
                            "system property "
                                    + PROPERTY
                                    + "="
                                    + value
                                    + " but the Vector API"
                                    + " kernels are unavailable: "
                                    + MODULE_MISSING);
                }
                yield PanamaHolder.ofWidth(Integer.parseInt(value.substring("panama-".length())));
            }
            case "" -> moduleAvailable ? PanamaHolder.INSTANCE : SCALAR;
            default ->
                    throw new IllegalArgumentException(
                            "system property "
                                    + PROPERTY
                                    + " must be 'scalar', 'panama', 'panama-256' or 'panama-512'"
                                    + " (or unset), got '"
                                    + forced
                                    + "'");
        };
    }

    /** Null when the Vector API can be used, else a sentence saying why not. */
    private static String panamaUnavailableReason() {
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
            return MODULE_MISSING;
        }
        return null;
    }

    // Loaded only when first used, so a JVM without the module never links PanamaKernels.
    private static final class PanamaHolder {
        static final VectorKernels INSTANCE = new PanamaKernels();
        private static VectorKernels w256;
        private static VectorKernels w512;

        static synchronized VectorKernels ofWidth(int bits) {
            if (bits == 256) {
                if (w256 == null) {
                    w256 = new PanamaKernels(256);
                }
                return w256;
            }
            if (bits == 512) {
                if (w512 == null) {
                    w512 = new PanamaKernels(512);
                }
                return w512;
            }
            return new PanamaKernels(bits); // refuses the width, saying what it expected
        }
    }
}

package dev.nepenthe.core.vector;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Locale;

/**
 * Chooses the {@link VectorKernels} implementation once per process.
 *
 * <p>The system property {@value #PROPERTY} forces a choice: {@code scalar} or {@code panama}
 * (the Vector API). Unset, the Vector API is used when the {@code jdk.incubator.vector}
 * module is readable (the JVM was started with {@code --add-modules jdk.incubator.vector});
 * otherwise the reason is logged once and the scalar kernels are used. Forcing {@code panama}
 * when the module is missing fails at start-up rather than silently running scalar code.
 */
public final class Kernels {

    /** System property that forces the implementation: {@code scalar} or {@code panama}. */
    public static final String PROPERTY = "nepenthe.kernels";

    private static final Logger LOG = System.getLogger(Kernels.class.getName());
    private static final VectorKernels SCALAR = new ScalarKernels();
    private static final VectorKernels CHOSEN = choose();

    private Kernels() {}

    /** The implementation chosen for this process. */
    public static VectorKernels get() {
        return CHOSEN;
    }

    /** The scalar implementation, always available (tests compare the two). */
    public static VectorKernels scalar() {
        return SCALAR;
    }

    /**
     * The Vector API implementation.
     *
     * @throws IllegalStateException if {@code jdk.incubator.vector} is not readable
     */
    public static VectorKernels panama() {
        String why = panamaUnavailableReason();
        if (why != null) {
            throw new IllegalStateException("Vector API kernels unavailable: " + why);
        }
        return PanamaHolder.INSTANCE;
    }

    private static VectorKernels choose() {
        String forced = System.getProperty(PROPERTY, "").trim().toLowerCase(Locale.ROOT);
        switch (forced) {
            case "scalar":
                return SCALAR;
            case "panama":
                return panama();
            case "":
                break;
            default:
                throw new IllegalArgumentException(
                        "system property " + PROPERTY + " must be 'scalar' or 'panama', got '" + forced + "'");
        }
        String why = panamaUnavailableReason();
        if (why != null) {
            LOG.log(Level.WARNING, "Using scalar vector kernels: {0}", why);
            return SCALAR;
        }
        return PanamaHolder.INSTANCE;
    }

    /** Null when the Vector API can be used, else a sentence saying why not. */
    private static String panamaUnavailableReason() {
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
            return "module jdk.incubator.vector is not in the boot layer"
                    + " (start the JVM with --add-modules jdk.incubator.vector)";
        }
        return null;
    }

    // Loaded only when first used, so a JVM without the module never links PanamaKernels.
    private static final class PanamaHolder {
        static final VectorKernels INSTANCE = new PanamaKernels();
    }
}

package dev.nepenthe.core.internal.forget;

/**
 * Named phases of a forget at which a test can make the worker stop dead, as a crash there would:
 * the test then reopens the store on what is on disk and checks that the operation resumes. With
 * nothing set a point costs one volatile read. Not for production use.
 */
public final class ForgetCrash {

    /** The phase to stop at ("after-mark", "cleanup-before-delete", ...), or null for none. */
    public static volatile String at;

    /**
     * Thrown at {@link #at}: an Error so that nothing on the way catches it as a failure to handle.
     */
    public static final class Simulated extends Error {
        Simulated(String where) {
            super("simulated crash at " + where);
        }
    }

    private ForgetCrash() {}

    /** Called by the forget engine at each named phase. */
    static void point(String where) {
        if (where.equals(at)) {
            throw new Simulated(where);
        }
    }
}

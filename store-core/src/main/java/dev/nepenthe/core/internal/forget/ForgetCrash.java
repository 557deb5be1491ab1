package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.internal.io.TestPoints;

/**
 * Named phases of a forget at which a test can make the worker stop dead, as a crash there would:
 * the test then reopens the store on what is on disk and checks that the operation resumes. The
 * phase to stop at is set on one store's {@link TestPoints#stopForgetAt}; with none set a point
 * costs one volatile read. Not for production use.
 */
public final class ForgetCrash {

    /**
     * Thrown at the phase set: an Error so that nothing on the way catches it as a failure to
     * handle.
     */
    public static final class Simulated extends Error {
        private static final long serialVersionUID = 1L;

        Simulated(String where) {
            super("simulated crash at " + where);
        }
    }

    private ForgetCrash() {}

    /** Called by the forget engine at each named phase, with the store's test points. */
    static void point(TestPoints points, String where) {
        if (where.equals(points.forgetStopAt())) {
            throw new Simulated(where);
        }
    }
}

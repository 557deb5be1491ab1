package dev.nepenthe.testing;

import java.security.SecureRandom;

/**
 * Seeds for randomized tests: a fresh one each run, so the suite explores new cases every time,
 * printed so any failure can be replayed with {@code -Dnepenthe.seed=N} (which pins every
 * randomized test of that run to N).
 */
public final class Seeds {

    /** System property that pins the seed. */
    public static final String PROPERTY = "nepenthe.seed";

    private Seeds() {}

    /** A fresh seed (or the pinned one), printed with the test's name and the replay flag. */
    public static long draw(String test) {
        String pinned = System.getProperty(PROPERTY);
        long seed =
                pinned != null && !pinned.isBlank()
                        ? Long.decode(pinned.trim())
                        : new SecureRandom().nextLong();
        System.out.println(
                "[seed] " + test + ": " + seed + " (replay with -D" + PROPERTY + "=" + seed + ")");
        return seed;
    }

    /** The suffix failure messages carry, so the seed is beside the failure in the report. */
    public static String replay(long seed) {
        return " [seed " + seed + ", replay with -D" + PROPERTY + "=" + seed + "]";
    }
}

package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.Nepenthe;

/**
 * Switches off the usage reporting that libraries we depend on would otherwise do: Chronicle Map's
 * analytics and DJL's telemetry (DJL runs the embedded model's tokenizer). The launcher passes the
 * same properties as JVM flags; {@link Nepenthe} and the embedder call this before those libraries
 * load, which covers applications that embed Nepenthe without the flags. A user's explicit setting
 * wins.
 */
public final class NoPhoneHome {

    static final String[][] PROPERTIES = {
        {"chronicle.analytics.disable", "true"},
        {"OPT_OUT_TRACKING", "true"},
        {"ai.djl.offline", "true"},
        {"offline", "true"},
    };

    private NoPhoneHome() {}

    public static void apply() {
        for (String[] p : PROPERTIES) {
            if (System.getProperty(p[0]) == null) {
                System.setProperty(p[0], p[1]);
            }
        }
    }
}

package dev.nepenthe.server;

/**
 * Switches off the usage reporting that libraries we depend on would otherwise do: Chronicle
 * Map's analytics and DJL's telemetry. The launcher passes the same properties as JVM flags;
 * this covers applications that embed Nepenthe without them. A user's explicit setting wins.
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

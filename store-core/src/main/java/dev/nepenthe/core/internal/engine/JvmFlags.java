package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.Nepenthe;
import java.util.ArrayList;
import java.util.List;
import net.openhft.chronicle.map.ChronicleMap;

/**
 * The JVM flags a process that opens a store must have been started with, checked once at {@link
 * Nepenthe#open}, so that a missing flag fails there with one message that lists every missing
 * flag, instead of later as an obscure error deep in a library.
 *
 * <p>Required: the exports and opens Chronicle Map (the id map) needs on Java 17 and later; it
 * reaches into JDK internals for off-heap memory and compiles code at run time. Recommended, logged
 * when absent: {@code --add-modules=jdk.incubator.vector} (without it the scalar kernels run,
 * correct but slower) and {@code --enable-native-access=ALL-UNNAMED} (without it the forget worker
 * cannot lower its own priority, and large vector regions are not mapped in huge pages, see {@code
 * NativeMemory}). {@code -XX:+UseTransparentHugePages} only speeds up an open. The full list is
 * {@code <nepenthe.jvm.flags>} in the root {@code pom.xml}; the launcher and the tests use it as it
 * is.
 */
public final class JvmFlags {

    /** {module, package, "export" or "open"}: what Chronicle Map needs to reach. */
    private static final String[][] REQUIRED = {
        {"java.base", "jdk.internal.ref", "export"},
        {"java.base", "sun.nio.ch", "export"},
        {"jdk.unsupported", "sun.misc", "export"},
        {"jdk.compiler", "com.sun.tools.javac.file", "export"},
        {"jdk.compiler", "com.sun.tools.javac", "open"},
        {"java.base", "java.lang", "open"},
        {"java.base", "java.lang.reflect", "open"},
        {"java.base", "java.io", "open"},
        {"java.base", "java.util", "open"},
    };

    private static final System.Logger LOG = System.getLogger(JvmFlags.class.getName());
    private static volatile boolean checked;

    private JvmFlags() {}

    /**
     * Checks the JVM's flags once.
     *
     * @throws IllegalStateException naming every required flag the JVM lacks
     */
    public static void check() {
        if (checked) {
            return;
        }
        List<String> missing = missing(ChronicleMap.class.getModule());
        if (!missing.isEmpty()) {
            throw new IllegalStateException(
                    "this JVM was started without flags Nepenthe needs (Chronicle Map, which"
                            + " keeps the id map, reaches into JDK internals): add "
                            + String.join(" ", missing)
                            + " to the java command line. Every flag Nepenthe uses is"
                            + " <nepenthe.jvm.flags> in its pom.xml.");
        }
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
            LOG.log(
                    System.Logger.Level.INFO,
                    "--add-modules=jdk.incubator.vector is not set: the scalar kernels run"
                            + " (same results, slower)");
        }
        checked = true;
    }

    /** The flags, as they would be written on a command line, that {@code user} is not granted. */
    static List<String> missing(Module user) {
        List<String> out = new ArrayList<>();
        for (String[] r : REQUIRED) {
            Module m = ModuleLayer.boot().findModule(r[0]).orElse(null);
            String target = user.isNamed() ? user.getName() : "ALL-UNNAMED";
            if (m == null) {
                out.add("--add-modules=" + r[0]);
                continue;
            }
            boolean granted = r[2].equals("open") ? m.isOpen(r[1], user) : m.isExported(r[1], user);
            if (!granted) {
                out.add("--add-" + r[2] + "s=" + r[0] + "/" + r[1] + "=" + target);
            }
        }
        return out;
    }
}

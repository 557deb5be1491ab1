package dev.nepenthe.testing;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The start of a command line for a JVM like this one: its java binary and its flags (the vector
 * module, Chronicle Map's exports, the switches that keep libraries from phoning home), for tests
 * and harnesses that start a server or a worker in a process of its own. Agents and debuggers are
 * left out: a child that attached to the same port or wrote the same coverage file would clash with
 * its parent.
 */
public final class ChildJvm {

    private ChildJvm() {}

    /**
     * This JVM's binary and flags.
     *
     * @param heap the child's maximum heap (e.g. {@code "256m"}), replacing this JVM's -Xmx and
     *     -Xms; null to keep this JVM's
     * @return a new, modifiable list: add the class path, the main class and its arguments
     */
    public static List<String> command(String heap) {
        List<String> cmd = new ArrayList<>();
        cmd.add(
                ProcessHandle.current()
                        .info()
                        .command()
                        .orElse(
                                Path.of(System.getProperty("java.home"), "bin", "java")
                                        .toString()));
        if (heap != null) {
            cmd.add("-Xmx" + heap);
        }
        for (String f : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            boolean heapFlag = f.startsWith("-Xmx") || f.startsWith("-Xms");
            boolean agent =
                    f.startsWith("-agentlib")
                            || f.startsWith("-javaagent")
                            || f.startsWith("-Xrunjdwp");
            if (!agent && !(heap != null && heapFlag)) {
                cmd.add(f);
            }
        }
        return cmd;
    }
}

package dev.nepenthe.core.internal.engine;

import java.lang.System.Logger.Level;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Locale;

/**
 * Lowers the scheduling priority of the calling thread, for work that must not slow searches down:
 * the forget worker's cleanup, probe and checks. On Linux a thread is a task with its own nice
 * value, so {@code setpriority(PRIO_PROCESS, gettid(), NICE)} reaches this thread alone; the
 * scheduler then gives a search thread that wants the same core about ten times the worker's share
 * at nice 10, while an idle core still runs the worker at full speed.
 *
 * <p>Only where it can be done quietly: on Linux, with native access enabled for this module (the
 * launcher and the tests pass {@code --enable-native-access=ALL-UNNAMED}); elsewhere the thread
 * keeps its priority and a debug line says why. Raising a nice value needs no privilege.
 */
public final class BackgroundPriority {
    private static final System.Logger LOG = System.getLogger(BackgroundPriority.class.getName());

    private static final int PRIO_PROCESS = 0;

    private BackgroundPriority() {}

    /**
     * Lowers the calling thread's priority to {@code nice} (1 to 19; 10 weighs 110 against 1024 for
     * a normal thread), or leaves it where it is when it is already that low or lower; returns
     * whether the thread now runs at {@code nice} or lower. Never throws.
     */
    // The point of the class: two libc calls, made only when native access is enabled (checked).
    @SuppressWarnings("restricted")
    public static boolean lowerCurrentThread(int nice) {
        if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
            LOG.log(
                    Level.DEBUG,
                    "background priority: not Linux, the forget worker keeps its priority");
            return false;
        }
        if (!BackgroundPriority.class.getModule().isNativeAccessEnabled()) {
            LOG.log(
                    Level.DEBUG,
                    "background priority: native access is not enabled for this module"
                            + " (--enable-native-access), the forget worker keeps its priority");
            return false;
        }
        try {
            Linker linker = Linker.nativeLinker();
            var libc = linker.defaultLookup();
            MethodHandle gettid =
                    linker.downcallHandle(
                            libc.find("gettid").orElseThrow(),
                            FunctionDescriptor.of(ValueLayout.JAVA_INT));
            MethodHandle setpriority =
                    linker.downcallHandle(
                            libc.find("setpriority").orElseThrow(),
                            FunctionDescriptor.of(
                                    ValueLayout.JAVA_INT,
                                    ValueLayout.JAVA_INT,
                                    ValueLayout.JAVA_INT,
                                    ValueLayout.JAVA_INT));
            MethodHandle getpriority =
                    linker.downcallHandle(
                            libc.find("getpriority").orElseThrow(),
                            FunctionDescriptor.of(
                                    ValueLayout.JAVA_INT,
                                    ValueLayout.JAVA_INT,
                                    ValueLayout.JAVA_INT));
            int tid = (int) gettid.invokeExact();
            // Lower only: a process already running nicer (a build under `nice`, a batch job)
            // keeps its own value, and a worker never runs ahead of the threads that started it.
            int current = (int) getpriority.invokeExact(PRIO_PROCESS, tid);
            if (current >= nice) {
                return true;
            }
            int rc = (int) setpriority.invokeExact(PRIO_PROCESS, tid, nice);
            if (rc != 0) {
                LOG.log(Level.DEBUG, "background priority: setpriority returned " + rc);
                return false;
            }
            return true;
        } catch (Throwable e) {
            LOG.log(Level.DEBUG, "background priority: not available (" + e + ")");
            return false;
        }
    }
}

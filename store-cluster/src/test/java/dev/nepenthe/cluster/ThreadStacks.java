package dev.nepenthe.cluster;

/** Every live thread's stack as text, for a test's message when something hangs. */
public final class ThreadStacks {

    private ThreadStacks() {}

    /**
     * Every live thread's name, state and frames.
     *
     * @return the text, one frame a line
     */
    public static String all() {
        StringBuilder b = new StringBuilder("\nthreads:");
        Thread.getAllStackTraces()
                .forEach(
                        (thread, frames) -> {
                            b.append("\n\"").append(thread.getName()).append("\" ");
                            b.append(thread.getState());
                            for (StackTraceElement f : frames) {
                                b.append("\n    at ").append(f);
                            }
                        });
        return b.toString();
    }
}

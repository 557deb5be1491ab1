package dev.nepenthe.core.internal.io;

/**
 * The bridge from code that has no store at hand to the store's {@link TestPoints}: a store binds
 * its points to the thread for the length of a call into its storage ({@link #during}), and a crash
 * point reached inside that call, or a log opened inside it, reports to that store's points. The
 * binding is the thread's and ends with the call ({@link ScopedValue}), so two stores working at
 * once in one JVM never see each other's points, and nothing is set globally.
 *
 * <p>It serves writes that cannot be handed the store's points: an index module's files, which it
 * writes through {@link ChecksummedFiles} behind the public index SPI (an index of a third party's
 * has no test points to take), and the few store files written without them (the signing key, the
 * store's folder list, index generations, the reconciliation stamp, a snapshot's rewritten
 * segments). Storage code that has the store's context passes {@code ctx.testPoints()} instead.
 */
public final class CrashPoints {

    private static final ScopedValue<TestPoints> STORE = ScopedValue.newInstance();

    private CrashPoints() {}

    /** A call that may throw {@code X}. */
    @FunctionalInterface
    public interface Call<T, X extends Throwable> {
        T call() throws X;
    }

    /** Runs {@code call} with {@code points} bound to this thread; returns what it returns. */
    public static <T, X extends Throwable> T during(TestPoints points, Call<T, X> call) throws X {
        return ScopedValue.where(STORE, points).call(call::call);
    }

    /**
     * The points of the store whose call this thread is in, or points of their own (reporting
     * nowhere) outside any.
     */
    public static TestPoints bound() {
        return STORE.isBound() ? STORE.get() : new TestPoints();
    }

    /** Reports {@code point} to the points of the store whose call this thread is in, if any. */
    public static void reached(String point) {
        if (STORE.isBound()) {
            STORE.get().reached(point);
        }
    }
}

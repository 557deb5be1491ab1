/**
 * The two float scores, as the steps that fold one pair of operands into an accumulator: a dot
 * product adds {@code x * y}, a squared distance {@code (x - y)^2}, each as one fused multiply-add.
 * {@code tmp} names the difference a squared distance needs.
 */
enum Op {
    DOT("dot", "dot product"),
    SQUARE("square", "squared distance");

    /** The bodies' name prefix. */
    final String prefix;

    /** What one score is, in words. */
    final String score;

    Op(String prefix, String score) {
        this.prefix = prefix;
        this.score = score;
    }

    /** Folds vectors {@code x} and {@code y} into {@code acc}. */
    void vectorStep(Src src, String acc, String x, String y, String tmp) {
        if (this == DOT) {
            src.line("%s = %s.fma(%s, %s);", acc, x, y, acc);
        } else {
            src.line("FloatVector %s = %s.sub(%s);", tmp, x, y);
            src.line("%s = %s.fma(%s, %s);", acc, tmp, tmp, acc);
        }
    }

    /**
     * Folds {@code x[k]} and {@code y[k]} into {@code acc[k]} for every k: a squared distance takes
     * all its differences first, then its multiply-adds, the order the hand-written pair bodies
     * had.
     */
    void vectorSteps(Src src, String[] acc, String[] x, String[] y, String[] tmp) {
        if (this == DOT) {
            for (int k = 0; k < acc.length; k++) {
                vectorStep(src, acc[k], x[k], y[k], tmp[k]);
            }
            return;
        }
        for (int k = 0; k < acc.length; k++) {
            src.line("FloatVector %s = %s.sub(%s);", tmp[k], x[k], y[k]);
        }
        for (int k = 0; k < acc.length; k++) {
            src.line("%s = %s.fma(%s, %s);", acc[k], tmp[k], tmp[k], acc[k]);
        }
    }

    /** Folds floats {@code x} and {@code y} into {@code sum}. */
    void scalarStep(Src src, String sum, String x, String y, String tmp) {
        if (this == DOT) {
            src.line("%s = Math.fma(%s, %s, %s);", sum, x, y, sum);
        } else {
            src.line("float %s = %s - %s;", tmp, x, y);
            src.line("%s = Math.fma(%s, %s, %s);", sum, tmp, tmp, sum);
        }
    }

    /** The entry point's name: {@code dot} or {@code squareDistance}. */
    String entry() {
        return this == DOT ? "dot" : "squareDistance";
    }
}

/**
 * Emits {@code PanamaQuads}: one query against four (or two) stored vectors at once, 16 lanes wide.
 * Each load of the query feeds every vector's fused multiply-add and the vectors' loads are
 * independent, so their cache misses overlap; every score is bit for bit the pair kernel's.
 */
final class QuadKernels {

    /** The accumulator sets' names, one set per stored vector. */
    private static final String[] FOUR = {"a", "b", "c", "d"};

    private static final String[] TWO = {"x", "y"};

    private QuadKernels() {}

    static String source() {
        Src src = new Src();
        KernelSources.floatHeader(src, "PanamaQuads", "R16_1", "R16_2", "R16_4", "R16_8");
        src.doc(
                "One query against four (or two) stored vectors at once, 16 lanes wide: each"
                        + " load of the query feeds",
                "every vector's FMAs, sixteen accumulators in all (AVX-512 has 32 registers),"
                        + " and the vectors' loads",
                "are independent, so their cache misses overlap. Every result is bit for bit"
                        + " the pair kernel's. Generated",
                "from store-core/src/codegen (QuadKernels).");
        src.open("final class PanamaQuads");
        src.line("");
        src.line("private static final ByteOrder NATIVE = ByteOrder.nativeOrder();");
        src.line("");
        src.line("private PanamaQuads() {}");
        for (Storage s : Storage.values()) {
            src.line("");
            rows(src, s);
            for (Op op : Op.values()) {
                src.line("");
                group(src, op, s, FOUR);
            }
        }
        src.line("");
        group(src, Op.SQUARE, Storage.ARRAY, TWO);
        src.close();
        return src.text();
    }

    /**
     * Scattered rows of a matrix (a graph node's neighbours): four at a time on 16 lanes, a
     * remainder of one to three as a four with its last row repeated and only the real results kept
     * (the repeats hit the cache); one at a time on 8 lanes, for the registers' sake.
     */
    private static void rows(Src src, Storage s) {
        String cast = s == Storage.ARRAY ? "" : "(long) ";
        src.doc(
                "Scores rows {@code rows[0, count)} of the matrix {@code vectors}, row r at {@code"
                        + " r * dim}.");
        src.open(
                "static void rows(boolean wide, boolean l2, float[] a, int aOff, %s vectors, int[]"
                        + " rows, int count, int dim, float[] out)",
                s.floats());
        src.open("if (!wide || dim < 64)");
        src.open("for (int v = 0; v < count; v++)");
        src.line("%s o = %srows[v] * dim;", s.index(), cast);
        src.line(
                "out[v] = l2 ? PanamaPairs.squareDistance(wide, a, aOff, vectors, o, dim)"
                        + " : PanamaPairs.dot(wide, a, aOff, vectors, o, dim);");
        src.close();
        src.line("return;");
        src.close();
        src.open("for (int v = 0; v < count; v += 4)");
        src.line("int left = Math.min(4, count - v);");
        src.line("%s o0 = %srows[v] * dim;", s.index(), cast);
        for (int j = 1; j < 4; j++) {
            src.line(
                    "%s o%d = left > %d ? %srows[v + %d] * dim : o%d;",
                    s.index(), j, j, cast, j, j - 1);
        }
        src.open("if (l2)");
        src.line("squareQuad16(a, aOff, vectors, o0, o1, o2, o3, dim, out, v, left);");
        src.orElse();
        src.line("dotQuad16(a, aOff, vectors, o0, o1, o2, o3, dim, out, v, left);");
        src.close();
        src.close();
        src.close();
    }

    /**
     * Scores of {@code q} against the vectors at {@code o0...} in {@code b}; a four keeps only its
     * first {@code keep} results, a two keeps both.
     */
    private static void group(Src src, Op op, Storage s, String[] sets) {
        int n = sets.length;
        String name = op.prefix + (n == 4 ? "Quad16" : "Pair16");
        StringBuilder offsets = new StringBuilder();
        for (int j = 0; j < n; j++) {
            offsets.append(s.index()).append(" o").append(j).append(", ");
        }
        src.doc(
                (n == 4 ? "Four " : "Two ")
                        + op.score
                        + "s in the order of the pair kernel, each"
                        + " query load feeding all.");
        src.open(
                "static void %s(float[] q, int qo, %s b, %sint len, float[] out, int at%s)",
                name, s.floats(), offsets, n == 4 ? ", int keep" : "");
        for (String set : sets) {
            PairKernels.accumulators(src, set, 4, "F16");
        }
        src.line("int i = 0;");
        src.line("int end64 = len & ~63;");
        src.open("for (; i < end64; i += 64)");
        for (int k = 0; k < 4; k++) {
            src.line(
                    "FloatVector q%d = FloatVector.fromArray(F16, q, %s);",
                    k, Storage.plus("qo + i", 16 * k));
            for (int j = 0; j < n; j++) {
                op.vectorStep(
                        src,
                        sets[j] + k,
                        "q" + k,
                        s.floatVector("F16", "b", Storage.plus("o" + j + " + i", 16 * k)),
                        "t" + j + k);
            }
        }
        src.close();
        for (String set : sets) {
            src.line("FloatVector r%s = %s0.add(%s2).add(%s1.add(%s3));", set, set, set, set, set);
        }
        src.line("int end16 = len & ~15;");
        src.open("for (; i < end16; i += 16)");
        src.line("FloatVector qv = FloatVector.fromArray(F16, q, qo + i);");
        for (int j = 0; j < n; j++) {
            op.vectorStep(
                    src, "r" + sets[j], "qv", s.floatVector("F16", "b", "o" + j + " + i"), "t" + j);
        }
        src.close();
        // The halvings written out, not calls: a call here would box each result vector.
        for (String set : sets) {
            for (int h = 8; h > 1; h /= 2) {
                src.line("r%s = r%s.add(r%s.rearrange(R16_%d));", set, set, set, h);
            }
            src.line("float s%s = r%s.add(r%s.rearrange(R16_1)).lane(0);", set, set, set);
        }
        src.open("for (; i < len; i++)");
        src.line("float qs = q[qo + i];");
        for (int j = 0; j < n; j++) {
            op.scalarStep(src, "s" + sets[j], "qs", s.floatAt("b", "o" + j + " + i"), "e" + j);
        }
        src.close();
        src.line("out[at] = s%s;", sets[0]);
        for (int j = 1; j < n; j++) {
            if (n == 4) {
                src.open("if (keep > %d)", j);
                src.line("out[at + %d] = s%s;", j, sets[j]);
                src.close();
            } else {
                src.line("out[at + %d] = s%s;", j, sets[j]);
            }
        }
        src.close();
    }
}

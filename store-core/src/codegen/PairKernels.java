import java.util.StringJoiner;

/**
 * Emits {@code PanamaPairs}: one query against one stored vector, in the order {@code
 * VectorKernels} defines, at 16 lanes (four accumulators) or 8 lanes (eight), for each {@link Op}
 * and each {@link Storage}.
 */
final class PairKernels {

    private PairKernels() {}

    static String source() {
        Src src = new Src();
        KernelSources.floatHeader(
                src, "PanamaPairs", "F8", "ROT8_1", "ROT8_2", "ROT8_4", "halve16");
        src.doc(
                "One query against one stored vector in the order {@link"
                        + " dev.nepenthe.core.vector.VectorKernels} defines: 16 lanes",
                "(four accumulators) or 8 lanes (eight), the stored vector in an array or a"
                        + " segment. Generated from",
                "store-core/src/codegen (PairKernels); see PanamaOrder for why each storage has"
                        + " its own body.");
        src.open("final class PanamaPairs");
        src.line("");
        src.line("private static final ByteOrder NATIVE = ByteOrder.nativeOrder();");
        src.line("");
        src.line("private PanamaPairs() {}");
        for (Op op : Op.values()) {
            for (Storage s : Storage.values()) {
                src.line("");
                entry(src, op, s);
                src.line("");
                body16(src, op, s);
                src.line("");
                body8(src, op, s);
            }
        }
        src.close();
        return src.text();
    }

    private static String params(Storage s) {
        return "float[] a, int aOff, " + s.floats() + " b, " + s.index() + " bOff, int len";
    }

    private static void entry(Src src, Op op, Storage s) {
        src.doc(
                "The "
                        + op.score
                        + " of {@code a} and the stored vector {@code b}, 16 or 8 lanes.");
        src.open("static float %s(boolean wide, %s)", op.entry(), params(s));
        src.line("int i = len & ~15;");
        src.line("float sum = 0f;");
        src.open("if (i > 0)");
        src.line(
                "sum = wide ? %s16(a, aOff, b, bOff, len) : %s8(a, aOff, b, bOff, len);",
                op.prefix, op.prefix);
        src.close();
        src.open("for (; i < len; i++)");
        op.scalarStep(src, "sum", "a[aOff + i]", s.floatAt("b", "bOff + i"), "d");
        src.close();
        src.line("return sum;");
        src.close();
    }

    /** Steps 1 to 4 of the order with 16-lane vectors: four accumulators, then one. */
    private static void body16(Src src, Op op, Storage s) {
        src.open("private static float %s16(%s)", op.prefix, params(s));
        src.line("FloatVector r = FloatVector.zero(F16);");
        src.line("int i = 0;");
        src.line("int end64 = len & ~63;");
        src.open("if (end64 > 0)");
        accumulators(src, "acc", 4, "F16");
        src.open("for (; i < end64; i += 64)");
        slices(src, op, s, "F16", 16, names("acc", 4));
        src.close();
        src.line("r = acc0.add(acc2).add(acc1.add(acc3));");
        src.close();
        src.line("int end16 = len & ~15;");
        src.open("for (; i < end16; i += 16)");
        slices(src, op, s, "F16", 16, new String[] {"r"});
        src.close();
        src.line("return halve16(r);");
        src.close();
    }

    /** Steps 1 to 4 with 8-lane vectors: eight accumulators, then a low and a high half. */
    private static void body8(Src src, Op op, Storage s) {
        src.open("private static float %s8(%s)", op.prefix, params(s));
        src.line("FloatVector lo = FloatVector.zero(F8), hi = FloatVector.zero(F8);");
        src.line("int i = 0;");
        src.line("int end64 = len & ~63;");
        src.open("if (end64 > 0)");
        accumulators(src, "acc", 8, "F8");
        src.open("for (; i < end64; i += 64)");
        slices(src, op, s, "F8", 8, names("acc", 8));
        src.close();
        src.line("lo = acc0.add(acc4).add(acc2.add(acc6));");
        src.line("hi = acc1.add(acc5).add(acc3.add(acc7));");
        src.close();
        src.line("int end16 = len & ~15;");
        src.open("for (; i < end16; i += 16)");
        slices(src, op, s, "F8", 8, new String[] {"lo", "hi"});
        src.close();
        src.line("// The halving written out, not a call: past C2's node budget a call would box.");
        src.line("FloatVector s = lo.add(hi);");
        src.line("s = s.add(s.rearrange(ROT8_4));");
        src.line("s = s.add(s.rearrange(ROT8_2));");
        src.line("return s.add(s.rearrange(ROT8_1)).lane(0);");
        src.close();
    }

    /**
     * Folds consecutive slices of {@code a} and {@code b} from index {@code i} into the
     * accumulators, slice k ({@code lanes} wide, of {@code species}) into {@code acc[k]}.
     */
    private static void slices(Src src, Op op, Storage s, String species, int lanes, String[] acc) {
        String[] x = new String[acc.length];
        String[] y = new String[acc.length];
        String[] tmp = new String[acc.length];
        for (int k = 0; k < acc.length; k++) {
            x[k] =
                    "FloatVector.fromArray("
                            + species
                            + ", a, "
                            + Storage.plus("aOff + i", lanes * k)
                            + ")";
            y[k] = s.floatVector(species, "b", Storage.plus("bOff + i", lanes * k));
            tmp[k] = "d" + k;
        }
        op.vectorSteps(src, acc, x, y, tmp);
    }

    /** {@code name0, ..., name(n-1)}. */
    private static String[] names(String name, int n) {
        String[] names = new String[n];
        for (int k = 0; k < n; k++) {
            names[k] = name + k;
        }
        return names;
    }

    /** {@code FloatVector name0 = zero, ..., name(n-1) = zero;} on one line. */
    static void accumulators(Src src, String name, int n, String species) {
        StringJoiner names = new StringJoiner(", ", "FloatVector ", ";");
        for (int k = 0; k < n; k++) {
            names.add(name + k + " = FloatVector.zero(" + species + ")");
        }
        src.line(names.toString());
    }
}

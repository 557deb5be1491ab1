package dev.nepenthe.core;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The public API apart from the internals, enforced. Users may rely on the API packages: the store
 * and its records ({@code dev.nepenthe.core}), the forget API ({@code .forget}), the audit API
 * ({@code .audit}) and the SPIs for indexes, kernels and embedders ({@code .index}, {@code
 * .vector}, {@code .embed}). Everything under {@code dev.nepenthe.core.internal} may change at any
 * commit, so no public signature of an API type may name an internal type, nor a type of a library
 * the store happens to use (a user would then depend on that library's version). And the internals
 * are layered: storage, crypto, evidence, the text index and the index helpers know nothing of the
 * engine or the forget engine, the engine knows nothing of the forget engine, no internal class
 * reaches back to the store's facade, and the forget engine's parts never reach back into the
 * protocol that drives them.
 */
class ArchitectureTest {

    private static final String ROOT = "dev.nepenthe.core";
    private static final Set<String> API_PACKAGES =
            Set.of(
                    ROOT,
                    ROOT + ".forget",
                    ROOT + ".audit",
                    ROOT + ".index",
                    ROOT + ".vector",
                    ROOT + ".embed");

    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes =
                new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages(ROOT);
        // Without this an import that found nothing would pass every rule below.
        assertTrue(
                classes.size() > 100, "expected store-core's classes, imported " + classes.size());
        assertTrue(
                classes.contain(ROOT + ".internal.forget.ForgetProtocol"),
                "ForgetProtocol was not imported");
    }

    @Test
    void everyPackageIsEitherApiOrInternal() {
        Set<String> stray = new TreeSet<>();
        for (JavaClass c : classes) {
            String p = c.getPackageName();
            if (!API_PACKAGES.contains(p) && !p.startsWith(ROOT + ".internal.")) {
                stray.add(p);
            }
        }
        assertTrue(
                stray.isEmpty(),
                "packages that are neither API nor internal: "
                        + stray
                        + "; add them to the API list (and the README's API section) or move them"
                        + " under internal");
    }

    @Test
    void apiSignaturesNameOnlyApiAndJdkTypes() {
        List<String> leaks = new ArrayList<>();
        for (JavaClass c : classes) {
            if (!API_PACKAGES.contains(c.getPackageName()) || !isExported(c)) {
                continue;
            }
            c.getRawSuperclass().ifPresent(s -> check(c.getName() + " extends", s, leaks));
            for (JavaType t : c.getInterfaces()) {
                checkAll(c.getName() + " implements", t, leaks);
            }
            for (JavaField f : c.getFields()) {
                if (isVisible(f)) {
                    checkAll(f.getFullName(), f.getType(), leaks);
                }
            }
            for (JavaCodeUnit u : c.getCodeUnits()) {
                if (!isVisible(u) || u.getName().equals("<clinit>")) {
                    continue;
                }
                checkAll(u.getFullName() + " returns", u.getReturnType(), leaks);
                for (JavaType p : u.getParameterTypes()) {
                    checkAll(u.getFullName() + " takes", p, leaks);
                }
                for (JavaClass thrown : u.getThrowsClause().getTypes()) {
                    check(u.getFullName() + " throws", thrown, leaks);
                }
            }
        }
        assertTrue(
                leaks.isEmpty(),
                "public API signatures that name internal or third-party types:\n  "
                        + String.join("\n  ", leaks));
    }

    @Test
    void apiSignatureCheckCatchesALeak() {
        // The control: a public signature naming an internal type is caught.
        List<String> leaks = new ArrayList<>();
        JavaClass engine = classes.get(ROOT + ".internal.engine.CollectionEngine");
        check("control", engine, leaks);
        JavaClass bitmap =
                new ClassFileImporter().importClass(org.roaringbitmap.RoaringBitmap.class);
        check("control", bitmap, leaks);
        assertTrue(leaks.size() == 2, "expected both control types to be reported, got " + leaks);
    }

    @Test
    void lowerInternalLayersDoNotKnowTheEngines() {
        noClasses()
                .that()
                .resideInAnyPackage(
                        ROOT + ".internal.storage..",
                        ROOT + ".internal.crypto..",
                        ROOT + ".internal.io..",
                        ROOT + ".internal.evidence..",
                        ROOT + ".internal.index..",
                        ROOT + ".internal.vector..",
                        ROOT + ".internal.text..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(ROOT + ".internal.engine..", ROOT + ".internal.forget..")
                .check(classes);
    }

    @Test
    void theEngineDoesNotKnowTheForgetEngine() {
        noClasses()
                .that()
                .resideInAPackage(ROOT + ".internal.engine..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage(ROOT + ".internal.forget..")
                .check(classes);
    }

    @Test
    void noInternalClassReachesBackToTheStoreFacade() {
        noClasses()
                .that()
                .resideInAPackage(ROOT + ".internal..")
                .should()
                .dependOnClassesThat()
                .haveFullyQualifiedName(ROOT + ".Nepenthe")
                .orShould()
                .dependOnClassesThat()
                .haveFullyQualifiedName(ROOT + ".VectorCollection")
                .check(classes);
    }

    @Test
    void theForgetEnginesPartsDoNotReachBackIntoTheProtocol() {
        noClasses()
                .that()
                .resideInAPackage(ROOT + ".internal.forget..")
                .and()
                .doNotHaveFullyQualifiedName(ROOT + ".internal.forget.ForgetProtocol")
                .and()
                .doNotHaveFullyQualifiedName(ROOT + ".internal.forget.ForgetProtocol$Op")
                .should()
                .dependOnClassesThat()
                .haveFullyQualifiedName(ROOT + ".internal.forget.ForgetProtocol")
                .check(classes);
    }

    /**
     * Every file of a store is reached through the folder it was opened with (and paths derived
     * from it), never through a path of the default file system made anew: that is the one seam
     * every file operation passes, and the fault tests put a faulty file system behind it. Two
     * classes are let through: the offline ledger verifier (its paths come from the command line)
     * and the id map, whose library takes a {@link java.io.File} (the map is derived from the
     * segments and checked against them at every open, so its faults cost a rebuild).
     */
    private static ArchRule filesOnlyThroughTheStoresFolder() {
        return noClasses()
                .that()
                .resideInAPackage(ROOT + "..")
                .and()
                .doNotHaveFullyQualifiedName(ROOT + ".audit.LedgerVerifier")
                .and()
                .doNotHaveFullyQualifiedName(ROOT + ".internal.storage.IdMap")
                .should()
                .callMethod(java.nio.file.Path.class, "of", String.class, String[].class)
                .orShould()
                .callMethod(java.nio.file.Path.class, "of", java.net.URI.class)
                .orShould()
                .callMethod(java.nio.file.Paths.class, "get", String.class, String[].class)
                .orShould()
                .callMethod(java.nio.file.FileSystems.class, "getDefault")
                .orShould()
                .callMethod(java.nio.file.Path.class, "toFile")
                .orShould()
                .callConstructorWhere(
                        com.tngtech.archunit.core.domain.JavaCall.Predicates.target(
                                com.tngtech.archunit.core.domain.properties.HasOwner.Predicates.With
                                        .owner(
                                                com.tngtech.archunit.base.DescribedPredicate
                                                        .describe(
                                                                "a java.io file class",
                                                                (JavaClass c) ->
                                                                        Set.of(
                                                                                        "java.io.File",
                                                                                        "java.io.FileInputStream",
                                                                                        "java.io.FileOutputStream",
                                                                                        "java.io.RandomAccessFile",
                                                                                        "java.io.FileReader",
                                                                                        "java.io.FileWriter")
                                                                                .contains(
                                                                                        c
                                                                                                .getName())))))
                .because(
                        "the store's files are reached through the folder it was opened with (the"
                                + " fault tests' seam)");
    }

    @Test
    void storeFilesAreReachedOnlyThroughTheFolderTheStoreWasOpenedWith() {
        filesOnlyThroughTheStoresFolder().check(classes);
    }

    /** Makes a path of the default file system: the rule's control. */
    static final class EscapesTheSeam {
        static java.nio.file.Path escape() {
            return java.nio.file.Path.of("/tmp", "elsewhere");
        }
    }

    @Test
    void theFileSeamRuleCatchesAPathMadeAnew() {
        JavaClasses control = new ClassFileImporter().importClasses(EscapesTheSeam.class);
        assertThrows(AssertionError.class, () -> filesOnlyThroughTheStoresFolder().check(control));
    }

    private static boolean isExported(JavaClass c) {
        for (JavaClass k = c; k != null; k = k.getEnclosingClass().orElse(null)) {
            if (!k.getModifiers().contains(JavaModifier.PUBLIC)
                    || k.isAnonymousClass()
                    || k.isLocalClass()) {
                return false;
            }
        }
        return true;
    }

    private static boolean isVisible(JavaMember m) {
        Set<JavaModifier> mods = m.getModifiers();
        return mods.contains(JavaModifier.PUBLIC)
                || (mods.contains(JavaModifier.PROTECTED)
                        && !m.getOwner().getModifiers().contains(JavaModifier.FINAL));
    }

    private static void checkAll(String where, JavaType t, List<String> leaks) {
        for (JavaClass raw : t.getAllInvolvedRawTypes()) {
            check(where, raw, leaks);
        }
    }

    private static void check(String where, JavaClass type, List<String> leaks) {
        JavaClass base = type.isArray() ? type.getBaseComponentType() : type;
        if (base.isPrimitive()) {
            return;
        }
        String p = base.getPackageName();
        boolean jdk = p.startsWith("java.");
        if (!jdk && !API_PACKAGES.contains(p)) {
            leaks.add(where + " " + base.getName());
        }
    }
}

package dev.nepenthe.cache;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.Test;

/**
 * The cache is a user of the store, like the gRPC server and any third party: it may rely on the
 * API packages ({@code dev.nepenthe.core}, {@code .forget}, {@code .index}, {@code .vector}) and
 * the JDK, never on {@code dev.nepenthe.core.internal}, which may change at any commit.
 */
class CacheArchitectureTest {

    private static final ArchRule NO_INTERNALS =
            noClasses()
                    .that()
                    .resideInAPackage("dev.nepenthe.cache..")
                    .should()
                    .dependOnClassesThat()
                    .resideInAPackage("dev.nepenthe.core.internal..");

    private static final ArchRule ONLY_THE_API =
            classes()
                    .that()
                    .resideInAPackage("dev.nepenthe.cache..")
                    .should()
                    .onlyDependOnClassesThat()
                    .resideInAnyPackage(
                            "java..",
                            "dev.nepenthe.cache..",
                            "dev.nepenthe.core",
                            "dev.nepenthe.core.forget",
                            "dev.nepenthe.core.index",
                            "dev.nepenthe.core.vector");

    private static JavaClasses cache() {
        JavaClasses classes =
                new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages("dev.nepenthe.cache");
        // Without this an import that found nothing would pass both rules.
        assertTrue(
                classes.contain(QueryCache.class),
                "QueryCache was not imported: " + classes.size() + " classes");
        return classes;
    }

    @Test
    void theCacheUsesOnlyTheStoresPublicApi() {
        JavaClasses classes = cache();
        NO_INTERNALS.check(classes);
        ONLY_THE_API.check(classes);
    }

    @Test
    void theRuleCatchesAClassThatReachesIntoTheInternals() {
        // VectorRecord hands its arrays to the store through internal.record.RecordAccess: the
        // same rule, pointed at it, must fail, or it would pass anything.
        JavaClasses core =
                new ClassFileImporter().importClasses(dev.nepenthe.core.VectorRecord.class);
        ArchRule same =
                noClasses()
                        .that()
                        .resideInAPackage("dev.nepenthe.core")
                        .should()
                        .dependOnClassesThat()
                        .resideInAPackage("dev.nepenthe.core.internal..");
        assertThrows(AssertionError.class, () -> same.check(core));
    }
}

package org.qoslab.workload;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import java.rmi.Remote;

/**
 * Package rules of java-workload (java-workload/README.md, "Package rules"): the top package holds
 * the commands (picocli) and the RayTracer's manager and worker; the subpackages are the parts they
 * compose, with no cycles among them.
 */
@AnalyzeClasses(packages = "org.qoslab.workload", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {
    /** render, rmi, net, matmul, pingpong, sort: no cycle between them. */
    @ArchTest
    static final ArchRule no_cycles_between_subpackages = slices().matching("org.qoslab.workload.(*)..")
            .should().beFreeOfCycles();

    /** The subpackages know the top package only through its exception type. */
    @ArchTest
    static final ArchRule subpackages_do_not_use_the_commands = noClasses()
            .that().resideInAPackage("org.qoslab.workload.(*)..")
            .should().dependOnClassesThat(resideInAPackage("org.qoslab.workload").and(not(belongToAnyOf(WorkloadException.class))))
            .because("the commands compose the parts; a part never calls back into a command");

    /** The JGF RayTracer is pure computation: no RMI, no network, nothing else of the workload. */
    @ArchTest
    static final ArchRule render_is_pure = noClasses().that().resideInAPackage("..workload.render..")
            .should().dependOnClassesThat(resideInAnyPackage("org.qoslab..", "java.rmi..", "java.net..", "java.nio..",
                    "picocli..").and(not(resideInAPackage("..workload.render.."))));

    /** The RayTracer's RMI layer uses the renderer and nothing else of the workload. */
    @ArchTest
    static final ArchRule rmi_uses_only_render = noClasses().that().resideInAPackage("..workload.rmi..")
            .should().dependOnClassesThat().resideInAnyPackage("org.qoslab.workload", "..workload.matmul..",
                    "..workload.pingpong..", "..workload.net..", "org.qoslab.common..");

    /** The datagram transport and marked sockets stand alone. */
    @ArchTest
    static final ArchRule net_stands_alone = noClasses().that().resideInAPackage("..workload.net..")
            .should().dependOnClassesThat(resideInAPackage("org.qoslab..").and(not(resideInAPackage("..workload.net.."))))
            .because("net is a transport under matmul and pingpong");

    /** Every RMI remote interface of the workload lives with its service: rmi (RayTracer), matmul or sort. */
    @ArchTest
    static final ArchRule remote_interfaces_live_with_their_service = classes().that().areInterfaces()
            .and().areAssignableTo(Remote.class).and().resideInAPackage("org.qoslab..")
            .should().resideInAnyPackage("..workload.rmi..", "..workload.matmul..", "..workload.sort..");

    /** picocli is the commands' alone. */
    @ArchTest
    static final ArchRule picocli_only_in_the_commands = noClasses()
            .that().doNotHaveFullyQualifiedName(Main.class.getName())
            .and().doNotHaveFullyQualifiedName(MatmulCommands.class.getName())
            .and().doNotHaveFullyQualifiedName(SortCommands.class.getName())
            .and().doNotHaveFullyQualifiedName(MpjCommands.class.getName())
            .and().haveNameNotMatching(".*\\.(Main|MatmulCommands|SortCommands|MpjCommands)\\$.*")
            .should().dependOnClassesThat().resideInAnyPackage("picocli..");

    /** MPJ Express (mpi.*, a system jar) is the mpj package's alone: every other command runs without it. */
    @ArchTest
    static final ArchRule mpj_express_only_in_mpj = noClasses().that().resideOutsideOfPackage("..workload.mpj..")
            .should().dependOnClassesThat().resideInAnyPackage("mpi..", "mpjdev..", "xdev..");

    /** The workload depends on java-common only, never on the capture or the analysis. */
    @ArchTest
    static final ArchRule no_other_tool = noClasses().should().dependOnClassesThat()
            .resideInAnyPackage("org.qoslab.capture..", "org.qoslab.analysis..");
}

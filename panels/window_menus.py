"""The window's actions and menus: File, Run, View, Lessons and Help, with their standard shortcuts."""
from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMessageBox

from panels.files import FileActions
from panels.try_drop_ins import DropInChoice
from panels.workload_files import WorkloadFiles
from workbench import lessons


class WindowMenus:
    """``MainWindow``'s actions and menus (a part of the window: it reads the window's widgets)."""

    def _make_actions(self) -> None:
        def action(text, slot, shortcut=None, name=None):
            a = QAction(text, self)
            if shortcut is not None:
                a.setShortcut(QKeySequence(shortcut))
            if name:
                a.setObjectName(name)
            a.triggered.connect(slot)
            return a

        self.runAction = action("&Run sweep", self.run, "Ctrl+R", "runAction")
        self.stopAction = action("&Stop", self.stop, "Esc", "stopAction")
        self.stopAction.setEnabled(False)
        quit_action = action("&Quit", self.close, QKeySequence.StandardKey.Quit, "quitAction")
        full = action("&Full screen", self.toggle_full_screen, "F11", "fullScreenAction")
        about = action("&About", self.about)
        p = self.presentation
        self.presentationAction = action("&Presentation mode", p.set_presenting, "F5", "presentationAction")
        self.darkAction = action("&Dark theme", p.set_dark, "Ctrl+Shift+D", "darkAction")
        self.zoomAction = action("Mouse-wheel &zoom", p.set_mouse_zoom, None, "zoomAction")
        for a in (self.presentationAction, self.darkAction, self.zoomAction):
            a.setCheckable(True)
        self.zoomAction.setChecked(True)
        larger = action("&Larger text", p.larger, QKeySequence.StandardKey.ZoomIn, "largerTextAction")
        smaller = action("&Smaller text", p.smaller, QKeySequence.StandardKey.ZoomOut, "smallerTextAction")

        self.files = FileActions(self)
        self.busyChanged.connect(self.files.update_enabled)
        file_menu = self.menuBar().addMenu("&File")
        self.workloadFiles = WorkloadFiles(self, self.controller.worker.plugins)    # --plugin's files too
        for group in [*self.files.menu_groups(), [self.workloadFiles.openAction]]:
            file_menu.addActions(group)
            file_menu.addSeparator()
        file_menu.addAction(quit_action)
        self.dropIns = DropInChoice(self, self.workloadFiles)
        run_menu = self.menuBar().addMenu("&Run")
        run_menu.addActions([self.runAction, self.stopAction])
        run_menu.addSeparator()
        run_menu.addAction(self.dropIns.action)
        view = self.menuBar().addMenu("&View")
        view.addActions([self.experimentDock.toggleViewAction(), self.resultsDock.toggleViewAction()])
        view.addSeparator()
        view.addActions([self.presentationAction, self.darkAction, larger, smaller, self.zoomAction])
        view.addActions([self.plots.keysAction, self.plots.captionsAction, *self.plots.alone.values()])
        view.addSeparator()
        view.addAction(full)
        # Lessons: one click sets up the experiment and runs it; the statement follows the sweep.
        self.lessonsMenu = self.menuBar().addMenu("&Lessons")
        self.lessonsMenu.setObjectName("lessonsMenu")
        self.lessonsMenu.setToolTipsVisible(True)
        for ls in lessons.LESSONS.values():
            a = QAction(ls.title, self)
            a.setObjectName(f"lesson:{ls.name}")
            a.setData(ls.name)
            a.setToolTip(ls.claim)
            a.setStatusTip(ls.claim)
            self.lessonsMenu.addAction(a)
        self.lessonsMenu.addSeparator()
        # Its data stays empty: on_lesson_chosen runs only the actions that name a lesson.
        self.exportLessonAction = action("&Export the lesson's chart and text...", self.ask_export_lesson,
                                         None, "exportLessonAction")
        self.exportLessonAction.setEnabled(False)
        self.lessonsMenu.addAction(self.exportLessonAction)
        self.lessonsMenu.triggered.connect(self.on_lesson_chosen)
        self.menuBar().addMenu("&Help").addAction(about)

    def toggle_full_screen(self) -> None:
        self.showNormal() if self.isFullScreen() else self.showFullScreen()

    def about(self) -> None:
        QMessageBox.about(self, "GPU Workbench", "GPU Workbench: see what a GPU does for your Python code.")

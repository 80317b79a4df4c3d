"""The window's menus: File, Run, View, Lessons and Help, with their standard shortcuts.

The menus hold actions; what an action does belongs to the part that owns it (the file actions,
run control, presentation, the lessons), which the window passes in. The Lessons menu says which
lesson was chosen through ``lessonChosen``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMessageBox


if TYPE_CHECKING:
    from panels.plots import PlotsPanel
    from panels.presentation import Presentation
    from panels.run_control import RunControl


class Menus(QObject):
    """The menu bar of ``window`` and the actions that are the menus' own (the view's toggles, the
    lessons, full screen, quit, about)."""

    lessonChosen = Signal(str)      # a lesson's name, from the Lessons menu
    exportLessonAsked = Signal()    # Lessons > Export the lesson's chart and text...

    def __init__(self, window: QMainWindow, run: RunControl, presentation: Presentation, plots: PlotsPanel,
                 file_groups: Sequence[Sequence[QAction]], run_extras: Sequence[QAction],
                 docks: Sequence[QDockWidget]) -> None:
        super().__init__(window)
        self.window = window            # whose menu bar this is, and what Quit and F11 act on
        self.presentation = presentation

        def action(text, slot, shortcut=None, name=None):
            a = QAction(text, window)
            if shortcut is not None:
                a.setShortcut(QKeySequence(shortcut))
            if name:
                a.setObjectName(name)
            a.triggered.connect(slot)
            return a

        quit_action = action("&Quit", window.close, QKeySequence.StandardKey.Quit, "quitAction")
        full = action("&Full screen", self.toggle_full_screen, "F11", "fullScreenAction")
        about = action("&About", self.about)
        p = presentation
        self.presentationAction = action("&Presentation mode", p.set_presenting, "F5", "presentationAction")
        self.darkAction = action("&Dark theme", p.set_dark, "Ctrl+Shift+D", "darkAction")
        self.zoomAction = action("Mouse-wheel &zoom", p.set_mouse_zoom, None, "zoomAction")
        for a in (self.presentationAction, self.darkAction, self.zoomAction):
            a.setCheckable(True)
        self.zoomAction.setChecked(True)
        p.changed.connect(self._presentation_changed)     # F5 or a restored setting: the marks follow
        larger = action("&Larger text", p.larger, QKeySequence.StandardKey.ZoomIn, "largerTextAction")
        smaller = action("&Smaller text", p.smaller, QKeySequence.StandardKey.ZoomOut, "smallerTextAction")

        bar = window.menuBar()
        file_menu = bar.addMenu("&File")
        for group in file_groups:
            file_menu.addActions(list(group))
            file_menu.addSeparator()
        file_menu.addAction(quit_action)
        run_menu = bar.addMenu("&Run")
        run_menu.addActions([run.runAction, run.stopAction])
        run_menu.addSeparator()
        run_menu.addActions(list(run_extras))
        view = bar.addMenu("&View")
        view.addActions([d.toggleViewAction() for d in docks])
        view.addSeparator()
        view.addActions([self.presentationAction, self.darkAction, larger, smaller, self.zoomAction])
        view.addActions([plots.keysAction, plots.captionsAction, *plots.alone.values()])
        view.addSeparator()
        view.addAction(full)
        # Lessons: one click sets up the experiment and runs it; the statement follows the sweep. The
        # lessons themselves (a dozen modules) load after the first frame: add_lessons fills the menu.
        self.lessonsMenu = bar.addMenu("&Lessons")
        self.lessonsMenu.setObjectName("lessonsMenu")
        self.lessonsMenu.setToolTipsVisible(True)
        self._window = window
        self._lessonsEnd = self.lessonsMenu.addSeparator()
        self.lessonsMenu.aboutToShow.connect(self.add_lessons)     # opened before they were added
        # Its data stays empty: only the actions that name a lesson are lessonChosen.
        self.exportLessonAction = action("&Export the lesson's chart and text...", self.exportLessonAsked,
                                         None, "exportLessonAction")
        self.exportLessonAction.setEnabled(False)
        self.lessonsMenu.addAction(self.exportLessonAction)
        self.lessonsMenu.triggered.connect(self._lesson_triggered)
        bar.addMenu("&Help").addAction(about)

    @Slot()
    def add_lessons(self) -> None:
        """The lessons into their menu, once: called when the window is ready (the worker's thread
        imported them after the first frame), or when the menu is opened before that."""
        if self._lessonsEnd is None:
            return
        from workbench import lessons
        actions = []
        for ls in lessons.LESSONS.values():
            a = QAction(ls.title, self._window)
            a.setObjectName(f"lesson:{ls.name}")
            a.setData(ls.name)
            a.setToolTip(ls.claim)
            a.setStatusTip(ls.claim)
            actions.append(a)
        self.lessonsMenu.insertActions(self._lessonsEnd, actions)
        self._lessonsEnd = None

    @Slot(QAction)
    def _lesson_triggered(self, action: QAction) -> None:
        if action.data():
            self.lessonChosen.emit(str(action.data()))

    @Slot(object)
    def _presentation_changed(self, _look) -> None:
        p = self.presentation
        for action, on in ((self.presentationAction, p.presenting), (self.darkAction, p.dark),
                           (self.zoomAction, p.mouse_zoom)):
            if action.isChecked() != on:
                action.setChecked(on)

    @Slot()
    def toggle_full_screen(self) -> None:
        w = self.window
        w.showNormal() if w.isFullScreen() else w.showFullScreen()

    @Slot()
    def about(self) -> None:
        QMessageBox.about(self.window, "GPU Workbench", "GPU Workbench: see what a GPU does for your Python code.")
